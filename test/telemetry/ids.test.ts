/**
 * Span ids from the pool (src/telemetry/ids.ts): random, each one's hex the hex of its bytes, and
 * an id handed out keeps its bytes when the pool is refilled (a refill makes a new pool).
 */
import { describe, expect, it } from 'vitest';
import { newSpanIds, TraceIds, traceIds } from '../../src/telemetry/ids.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('span ids from the pool', () => {
  it('are 16 hex digits of their bytes, all different, across refills of the pool', () => {
    const trace = new TraceIds(TRACE);
    const ids = Array.from({ length: 9000 }, () => newSpanIds(trace, 1));
    // Checked after all were drawn: the first ones' bytes are still theirs.
    const wrong = ids.filter(
      (id) =>
        !/^[0-9a-f]{16}$/.test(id.spanId) ||
        id.spanId === '0000000000000000' ||
        Buffer.from(id.bytes.subarray(id.at, id.at + 8)).toString('hex') !== id.spanId ||
        id.traceId !== TRACE ||
        id.trace !== trace,
    );
    expect(wrong).toEqual([]);
    expect(new Set(ids.map((id) => id.spanId)).size).toBe(ids.length);
  });

  it('keep only the sampled bit of the flags', () => {
    expect(newSpanIds(new TraceIds(TRACE), 3).flags).toBe(1);
    expect(newSpanIds(new TraceIds(TRACE), 2).flags).toBe(0);
  });
});

describe('a trace’s ids', () => {
  it('are its id’s bytes as Span.trace_id and the next tag, made once while the same trace is asked for', () => {
    const a = traceIds(TRACE);
    expect(a.field.toString('hex')).toBe(`0a10${TRACE}12`);
    expect(traceIds(`${TRACE} `.trim())).toBe(a);
    const b = traceIds('0af7651916cd43dd8448eb211c80319c');
    expect(b).not.toBe(a);
    expect(b.field.toString('hex')).toBe('0a100af7651916cd43dd8448eb211c80319c12');
  });
});
