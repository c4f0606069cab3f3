/** Ids by a prefix of 8+ characters (src/server/id-prefix.ts) over the thread history's index. */
import { describe, expect, it } from 'vitest';
import { ThreadHistory } from '../../src/bus/history/memory.ts';
import { AmbiguousIdError } from '../../src/errors.ts';
import { pickByPrefix, resolveThreadId, threadNotFound } from '../../src/server/id-prefix.ts';

function historyOf(ids: string[]) {
  const history = new ThreadHistory({ maxPerThread: 10, maxThreads: 100 });
  for (const id of ids) history.begin(id, Date.now());
  return { threadIdsStartingWith: (prefix: string, limit: number) => history.idsStartingWith(prefix, limit) };
}

const A = '6f0c1a2b-0000-4000-8000-000000000001';
const B = '6f0c1a2b-0000-4000-8000-000000000002';
const C = '9d8e7f60-0000-4000-8000-000000000003';

describe('thread ids by prefix', () => {
  const bus = historyOf([A, B, C]) as Parameters<typeof resolveThreadId>[0];

  it('a unique prefix of 8+ characters stands for its id; a whole id for itself', () => {
    expect(resolveThreadId(bus, '9d8e7f60')).toBe(C);
    expect(resolveThreadId(bus, C.slice(0, 20))).toBe(C);
    expect(resolveThreadId(bus, A)).toBe(A);
    expect(resolveThreadId(bus, B)).toBe(B);
  });

  it('a prefix several ids start with is refused, naming them', () => {
    let error: unknown;
    try {
      resolveThreadId(bus, '6f0c1a2b');
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(AmbiguousIdError);
    expect((error as AmbiguousIdError).code).toBe('id.ambiguous');
    expect((error as AmbiguousIdError).message).toBe(
      `thread id '6f0c1a2b' is ambiguous: it starts 2 threads' ids (${B}, ${A}); give more characters`,
    );
  });

  it('fewer than 8 characters, or none matching, is left for the caller to call not found', () => {
    expect(resolveThreadId(bus, '9d8e7f6')).toBe('9d8e7f6');
    expect(threadNotFound('9d8e7f6')).toBe(
      'thread not found: 9d8e7f6 (an id prefix needs at least 8 characters)',
    );
    expect(resolveThreadId(bus, 'ffffffff')).toBe('ffffffff');
    expect(pickByPrefix('approval', 'ap_12345', ['ap_123456789', 'ap_999'])).toBe('ap_123456789');
  });
});
