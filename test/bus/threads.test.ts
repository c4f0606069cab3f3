import { describe, expect, it } from 'vitest';
import { frameIds, ThreadRegistry } from '../../src/bus/threads.ts';

const registry = () => new ThreadRegistry({ maxHops: 5, maxDepth: 3, idleMs: 1_000 });

describe('ThreadRegistry', () => {
  it('prunes a frame with everything opened below it, and nothing else', () => {
    const r = registry();
    const t = r.createThread();
    const root = r.openFrame(t, 'a', 'api', null);
    const b = r.openFrame(t, 'b', 'a', root, 1);
    const c = r.openFrame(t, 'c', 'b', b, 2);
    const sibling = r.openFrame(t, 'd', 'a', root, 1);
    r.pruneFrame(b);
    expect(r.frame(b.id)).toBeUndefined();
    expect(r.frame(c.id)).toBeUndefined();
    expect(r.frame(root.id)).toBeDefined();
    expect(r.frame(sibling.id)).toBeDefined();
    expect(r.size.frames).toBe(2);
  });

  it('forgets a copy of a frame with no parent and no children without telling the observer; keeps any other', () => {
    const told: string[] = [];
    const r = new ThreadRegistry({
      maxHops: 5,
      maxDepth: 3,
      idleMs: 1_000,
      observer: {
        threadCreated: () => {},
        frameOpened: (f) => told.push(`opened ${f.id}`),
        framesPruned: (_t, frames) => told.push(`pruned ${frames.map((f) => f.id).join(',')}`),
        hopCharged: () => {},
      },
    });
    const t = r.createThread();
    const lone = r.openFrame(t, 'a', 'api', null);
    const parent = r.openFrame(t, 'b', 'api', null);
    const child = r.openFrame(t, 'c', 'b', parent, 1);
    told.length = 0;
    r.forgetFrame(lone);
    r.forgetFrame(parent); // has a child: pruning it here must still reach the child
    r.forgetFrame(child); // has a parent
    expect(r.frame(lone.id)).toBeUndefined();
    expect([...frameIds(t)]).not.toContain(lone.id);
    expect(r.frame(parent.id)).toBe(parent);
    expect(r.frame(child.id)).toBe(child);
    expect(told).toEqual([]);
    r.pruneFrame(parent);
    expect(told).toEqual([`pruned ${parent.id},${child.id}`]);
  });

  it("keeps a thread's frame ids as frames open and close, from none to many and back", () => {
    const r = registry();
    const t = r.createThread();
    expect([...frameIds(t)]).toEqual([]);
    const a = r.openFrame(t, 'a', 'api', null);
    expect([...frameIds(t)]).toEqual([a.id]);
    const b = r.openFrame(t, 'b', 'a', a, 1);
    const c = r.openFrame(t, 'c', 'b', b, 2);
    const d = r.openFrame(t, 'd', 'api', null);
    expect([...frameIds(t)].sort()).toEqual([a.id, b.id, c.id, d.id].sort());
    r.pruneFrame(b);
    expect([...frameIds(t)].sort()).toEqual([a.id, d.id].sort());
    r.pruneFrame(a);
    expect([...frameIds(t)]).toEqual([d.id]);
    expect(r.frame(d.id)).toBe(d);
    r.pruneFrame(d);
    expect([...frameIds(t)]).toEqual([]);
    expect(r.size.frames).toBe(0);
    // Collected with its frames, whatever form they were held in.
    const u = r.createThread();
    r.openFrame(u, 'a', 'api', null);
    r.openFrame(u, 'b', 'api', null);
    const v = r.createThread();
    r.openFrame(v, 'a', 'api', null);
    expect(r.collectIdle(Date.now() + 5_000).sort()).toEqual([t.id, u.id, v.id].sort());
    expect(r.size).toEqual({ threads: 0, frames: 0 });
  });

  it('charges hops and depth against the budgets', () => {
    const r = registry();
    const t = r.createThread();
    for (let i = 0; i < 5; i++) expect(r.chargeHop(t, 0)).toEqual({ ok: true });
    expect(r.chargeHop(t, 0)).toEqual({ ok: false, what: 'hops', limit: 5 });
    const u = r.createThread();
    expect(r.chargeHop(u, 4)).toEqual({ ok: false, what: 'depth', limit: 3 });
  });

  it('collects idle threads with nothing in flight, and only those', () => {
    const r = registry();
    const idle = r.createThread();
    r.openFrame(idle, 'a', 'api', null);
    const busy = r.createThread();
    busy.inFlight = 1;
    const fresh = r.createThread();
    const now = Date.now();
    fresh.lastActive = now + 5_000;
    expect(r.collectIdle(now + 2_000)).toEqual([idle.id]);
    expect(r.thread(idle.id)).toBeUndefined();
    expect(r.thread(busy.id)).toBeDefined();
    expect(r.thread(fresh.id)).toBeDefined();
    expect(r.size.frames).toBe(0);
  });

  it('keeps a scope frozen and de-duplicated', () => {
    const r = registry();
    const t = r.createThread(['read', 'read', 'fetch_web']);
    expect(t.scope).toEqual(['read', 'fetch_web']);
    expect(Object.isFrozen(t.scope)).toBe(true);
  });
});
