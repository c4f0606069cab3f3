import { describe, expect, it } from 'vitest';
import { ListenerQueue } from '../../src/bus/scheduler.ts';

function recorder(maxConcurrent: number, capacity = 100) {
  const order: string[] = [];
  const gates: Array<() => void> = [];
  const queue = new ListenerQueue<string>({ capacity, maxConcurrent }, (item) => {
    order.push(item);
    return new Promise<void>((resolve) => gates.push(resolve));
  });
  const releaseAll = async () => {
    while (gates.length > 0) {
      gates.shift()!();
      await new Promise((r) => setImmediate(r));
    }
  };
  return { queue, order, releaseAll };
}

describe('ListenerQueue', () => {
  it('serves threads round-robin so one busy thread cannot starve another', async () => {
    const { queue, order, releaseAll } = recorder(1);
    for (let i = 0; i < 5; i++) queue.offer('chatty', `chatty-${i}`);
    queue.offer('quiet', 'quiet-0');
    await releaseAll();
    // chatty-0 ran at once and chatty-1..4 queued before quiet-0 arrived: threads then take turns,
    // so the quiet thread waits for one of chatty's items, not for all four.
    expect(order).toEqual(['chatty-0', 'chatty-1', 'quiet-0', 'chatty-2', 'chatty-3', 'chatty-4']);
  });

  it('never runs more than maxConcurrent at once', async () => {
    const { queue, order } = recorder(3);
    for (let i = 0; i < 10; i++) queue.offer(`t${i}`, `item-${i}`);
    expect(order).toHaveLength(3);
    expect(queue.active).toBe(3);
    expect(queue.depth).toBe(7);
  });

  it('refuses offers past its capacity instead of growing', () => {
    const { queue } = recorder(1, 3);
    const accepted = Array.from({ length: 6 }, (_, i) => queue.offer('t', `x${i}`));
    // One running, three waiting.
    expect(accepted).toEqual([true, true, true, true, false, false]);
    expect(queue.full).toBe(true);
  });

  it('holds work while paused and resumes in order', async () => {
    const { queue, order, releaseAll } = recorder(1);
    queue.pause();
    queue.offer('t', 'a');
    queue.offer('t', 'b');
    expect(order).toEqual([]);
    queue.resume();
    await releaseAll();
    expect(order).toEqual(['a', 'b']);
    await queue.idle();
  });

  it('frees the slot of a run that is over on return at once: the next item runs before the offer returns', async () => {
    const order: string[] = [];
    const queue = new ListenerQueue<string>({ capacity: 10, maxConcurrent: 1 }, (item) => {
      order.push(item);
      // A run that queues its own successor (a hop in memory) and is over when it returns.
      if (item === 'a') queue.offer('t', 'b');
      if (item === 'b') queue.offer('t', 'c');
      return undefined;
    });
    queue.offer('t', 'a');
    expect(order).toEqual(['a', 'b', 'c']);
    expect(queue.active).toBe(0);
    await queue.idle();
  });

  it('frees the slot of a run that throws instead of returning', async () => {
    const order: string[] = [];
    const queue = new ListenerQueue<string>({ capacity: 10, maxConcurrent: 1 }, (item) => {
      order.push(item);
      throw new Error(`run ${item} failed`);
    });
    queue.offer('t', 'a');
    queue.offer('t', 'b');
    expect(order).toEqual(['a', 'b']);
    expect(queue.active).toBe(0);
    await queue.idle();
  });

  it('gives back the one item waiting alone when its thread is removed or the queue cleared', async () => {
    const { queue, order, releaseAll } = recorder(1);
    queue.offer('busy', 'running');
    // No slot free and nothing else waiting: the item waits alone.
    queue.offer('killed', 'waiting');
    expect(queue.depth).toBe(1);
    expect(queue.removeThread('other')).toEqual([]);
    expect(queue.removeThread('killed')).toEqual(['waiting']);
    expect(queue.depth).toBe(0);
    queue.offer('t', 'dropped');
    queue.offer('t', 'dropped too');
    expect(queue.clear()).toEqual(['dropped', 'dropped too']);
    await releaseAll();
    expect(order).toEqual(['running']);
    await queue.idle();
  });
});
