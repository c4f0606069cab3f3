import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { BackgroundWriter } from '../../src/storage/background-writer.ts';

function writer(gatherMs: number, fail: () => boolean = () => false) {
  const batches: string[][] = [];
  const errors: string[] = [];
  const w = new BackgroundWriter<string>({
    write: async (batch) => {
      if (fail()) throw new Error('disk refused');
      batches.push([...batch]);
    },
    retryDelayMs: () => 60_000,
    onError: (m) => errors.push(m),
    failedMessage: (e) => `failed: ${e.message}`,
    recoveredMessage: () => 'recovered',
    flushError: (pending) => new Error(`${pending} pending`),
    writeAfterClose: true,
    gatherMs,
  });
  return { w, batches, errors };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await turn();
}

describe('BackgroundWriter gathering', () => {
  it('writes the first item after a quiet spell at once, and gathers what follows until flush', async () => {
    const { w, batches } = writer(60_000);
    w.push('a');
    await settle();
    expect(batches).toEqual([['a']]);
    w.push('b');
    w.push('c');
    await settle();
    // Within the (long) window: not written yet, still pending.
    expect(batches).toEqual([['a']]);
    expect(w.pending).toBe(2);
    await w.flush();
    expect(batches).toEqual([['a'], ['b', 'c']]);
    expect(w.pending).toBe(0);
    await w.close();
  });

  it('items pushed during a write wait for the window; close writes them without waiting', async () => {
    const { w, batches } = writer(60_000);
    w.push('a');
    w.push('b'); // queued behind the running write of 'a'
    await settle();
    expect(batches).toEqual([['a']]);
    await w.close();
    expect(batches).toEqual([['a'], ['b']]);
  });

  it('without gathering every push starts a write', async () => {
    const { w, batches } = writer(0);
    w.push('a');
    await settle();
    w.push('b');
    await settle();
    expect(batches).toEqual([['a'], ['b']]);
    await w.close();
  });

  it('a refusing disk under gathering still rejects flush, keeps the items, and does not spin', async () => {
    let refuse = true;
    let attempts = 0;
    const { w, batches, errors } = writer(60_000, () => {
      attempts++;
      return refuse;
    });
    w.push('a');
    await settle();
    expect(attempts).toBe(1);
    await expect(w.flush()).rejects.toThrow('1 pending');
    await settle();
    expect(attempts).toBe(2);
    expect(errors.length).toBe(2);
    refuse = false;
    await w.close();
    expect(batches).toEqual([['a']]);
  });
});
