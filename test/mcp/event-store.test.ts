/** The per-session store a resumed MCP stream replays from: bounded by count and by bytes. */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { BoundedEventStore } from '../../src/mcp/server/event-store.ts';

const note = (n: number, pad = 0): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { level: 'info', data: `${n}${'x'.repeat(pad)}` },
});

async function replay(store: BoundedEventStore, after: string): Promise<string[]> {
  const sent: string[] = [];
  await store.replayEventsAfter(after, {
    send: async (_id, m) => {
      sent.push(String((m as { params?: { data?: string } }).params?.data).slice(0, 3));
    },
  });
  return sent;
}

describe('BoundedEventStore', () => {
  it("replays what came after an id, of that id's stream only, without priming events", async () => {
    const store = new BoundedEventStore(100);
    const priming = await store.storeEvent('a', {} as JSONRPCMessage);
    await store.storeEvent('a', note(1));
    await store.storeEvent('b', note(2));
    await store.storeEvent('a', note(3));
    expect(await store.getStreamIdForEventId(priming)).toBe('a');
    expect(await replay(store, priming)).toEqual(['1', '3']);
    // A number in range under another stream's name is no id this store gave.
    expect(await store.getStreamIdForEventId('other-stream.2')).toBeUndefined();
    expect(await store.getStreamIdForEventId('a.3')).toBeUndefined();
  });

  it('keeps the newest events by count: an evicted id is unknown (the transport answers 400)', async () => {
    const store = new BoundedEventStore(5);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await store.storeEvent('s', note(i)));
    expect(store.size).toBe(5);
    expect(await store.getStreamIdForEventId(ids[5]!)).toBeUndefined();
    expect(await store.getStreamIdForEventId(ids[7]!)).toBe('s');
    expect(await replay(store, ids[7]!)).toEqual(['8', '9', '10', '11']);
    expect(await store.getStreamIdForEventId('s.999')).toBeUndefined();
    expect(await store.getStreamIdForEventId('no-dot')).toBeUndefined();
  });

  it('keeps at most its bytes, and always the newest event even when that alone is more', async () => {
    const store = new BoundedEventStore(1_000, 5_000);
    for (let i = 0; i < 50; i++) await store.storeEvent('s', note(i, 1_000));
    expect(store.bytes).toBeLessThanOrEqual(5_000);
    expect(store.size).toBe(4);
    await store.storeEvent('s', note(99, 20_000));
    expect(store.size).toBe(1);
    expect(store.bytes).toBeGreaterThan(20_000);
  });
});
