/** The error classes: one base, each named class keeps its name, instanceof and a dotted code. */
import { describe, expect, it } from 'vitest';
import * as api from '../src/index.ts';

const samples: [string, api.OrganismError][] = [
  ['RoutingError', new api.RoutingError()],
  ['BusyError', new api.BusyError('worker')],
  ['BudgetError', new api.BudgetError('hops', 10)],
  ['HandlerTimeoutError', new api.HandlerTimeoutError('worker', 50)],
  ['ShuttingDownError', new api.ShuttingDownError()],
  ['UsageError', new api.UsageError('bad flag')],
  ['ThreadNotFoundError', new api.ThreadNotFoundError('t1')],
  ['ListenerLoadError', new api.ListenerLoadError('m.js', 'no export', { cause: new Error('x') })],
  ['KvError', new api.KvError('kv.invalid_key', 'bad key')],
  ['LlmError', new api.LlmError('llm.server', 'down', { retryable: true })],
  ['ConfigError', new api.ConfigError([{ file: 'organism.yaml', path: 'a', message: 'b' }])],
];

describe('errors', () => {
  it.each(samples)(
    '%s keeps its name, is an OrganismError and an Error, and has a dotted code',
    (name, error) => {
      expect(error.name).toBe(name);
      expect(error).toBeInstanceOf(api.OrganismError);
      expect(error).toBeInstanceOf(Error);
      expect(error).toBeInstanceOf((api as unknown as Record<string, new (...a: never[]) => unknown>)[name]!);
      expect(error.code).toMatch(/^[a-z_]+\.[a-z_]+$/);
    },
  );

  it('fixed-code classes build their message, details and cause as before', () => {
    const busy = new api.BusyError('worker');
    expect([busy.code, busy.message, busy.details]).toEqual([
      'bus.busy',
      'listener worker is busy; retry later',
      { listener: 'worker' },
    ]);
    expect(new api.RoutingError().message).toBe(
      'Message could not be delivered. Please verify your target and try again.',
    );
    expect(new api.RoutingError('no listener named x').code).toBe('bus.routing');
    const cause = new Error('enoent');
    expect(new api.ListenerLoadError('m.js', 'missing', { cause }).cause).toBe(cause);
    expect(new api.UsageError('x').code).toBe('cli.usage');
    expect(new api.ShuttingDownError().code).toBe('bus.shutting_down');
    expect(new api.BusyError('w')).not.toBeInstanceOf(api.RoutingError);
  });

  it('toJSON gives code and message only', () => {
    expect(JSON.parse(JSON.stringify(new api.BudgetError('depth', 3)))).toEqual({
      code: 'bus.budget',
      message: 'thread depth budget of 3 exhausted',
    });
  });
});
