import { describe, expect, it } from 'vitest';
import {
  type LifecycleEvent,
  matches,
  parseFilter,
  type StreamEvent,
  type StreamFilter,
} from '../../src/server/events.ts';

const message = (from: string, to: string, thread = 't1', kind = 'message'): StreamEvent => ({
  type: 'message',
  kind: kind as 'message',
  thread,
  message: { id: 'm', from, to, kind: kind as 'message', payload: '<x/>', time: '' },
});
const tool: StreamEvent = {
  type: 'tool',
  kind: 'tool',
  thread: 't2',
  listener: 'toolbox',
  tool: 'calculate',
  call_id: 'c',
  verdict: 'allow',
  rule_id: null,
  reason: null,
  outcome: 'ok',
  code: null,
  duration_ms: 1,
  time: '',
};
const life = (fields: Partial<LifecycleEvent>): StreamEvent => ({
  type: 'lifecycle',
  kind: 'lifecycle',
  event: 'organism.reloaded',
  time: '',
  ...fields,
});
const filter = (input: unknown) => parseFilter(input) as StreamFilter;

describe('stream filters', () => {
  it('pass everything when empty', () => {
    for (const event of [message('a', 'b'), tool, life({})]) expect(matches({}, event)).toBe(true);
  });

  it('match listeners on sender, receiver, tool caller and tool', () => {
    const f = filter({ listeners: ['b'] });
    expect(matches(f, message('a', 'b'))).toBe(true);
    expect(matches(f, message('b', 'c'))).toBe(true);
    expect(matches(f, message('a', 'c'))).toBe(false);
    expect(matches(filter({ listeners: 'calculate' }), tool)).toBe(true);
    expect(matches(filter({ listeners: 'toolbox' }), tool)).toBe(true);
    expect(matches(f, tool)).toBe(false);
    expect(matches(f, life({ event: 'listener.paused', listener: 'b' }))).toBe(true);
    expect(matches(f, life({ event: 'thread.idle', thread: 't1' }))).toBe(false);
  });

  it('match threads and kinds; organism-wide events pass listener and thread filters', () => {
    const f = filter({ threads: ['t1'], kinds: 'message,lifecycle' });
    expect(matches(f, message('a', 'b', 't1'))).toBe(true);
    expect(matches(f, message('a', 'b', 't2'))).toBe(false);
    expect(matches(f, message('a', 'b', 't1', 'response'))).toBe(false);
    expect(matches(f, tool)).toBe(false);
    expect(matches(f, life({}))).toBe(true);
    expect(matches(filter({ kinds: ['tool'] }), life({}))).toBe(false);
  });

  it('explain what is wrong with a filter', () => {
    expect(parseFilter([])).toMatch(/object/);
    expect(parseFilter({ topics: ['x'] })).toMatch(/unknown filter 'topics'/);
    expect(parseFilter({ kinds: ['gossip'] })).toMatch(/unknown kind 'gossip'/);
    expect(parseFilter({ listeners: [1] })).toMatch(/listeners must be a list of names/);
    expect(parseFilter({ threads: Array.from({ length: 1001 }, (_, i) => `t${i}`) })).toMatch(/at most 1000/);
  });
});
