/** The arguments a tool sees are a copy of JSON data, refused with where when they are not JSON. */
import { describe, expect, it } from 'vitest';
import { ArgsNotJsonError, copyJsonArgs, MAX_ARGS_DEPTH } from '../../src/tools/args-copy.ts';
import { echoTool, makeDispatcher } from './runtime/helpers.ts';

describe('copyJsonArgs', () => {
  it('copies JSON data deeply, as JSON.stringify writes it', () => {
    const args = {
      a: 'x',
      n: 1.5,
      b: false,
      z: null,
      list: [1, 'two', { three: [3] }],
      nested: { deep: { x: 1 } },
    };
    const copied = copyJsonArgs(args) as typeof args;
    expect(copied).toEqual(args);
    expect(copied).not.toBe(args);
    expect(copied.list).not.toBe(args.list);
    expect(copied.nested.deep).not.toBe(args.nested.deep);
    // An undefined property is left out, undefined in an array is null: what JSON would carry.
    expect(copyJsonArgs({ keep: 1, gone: undefined, list: [undefined, 2] })).toStrictEqual({
      keep: 1,
      list: [null, 2],
    });
  });

  it.each([
    ['a Date', { when: new Date(0) }, 'argument /when is a Date, not plain JSON data'],
    ['a Map', { m: new Map() }, 'argument /m is a Map, not plain JSON data'],
    ['a function', { list: [1, () => 1] }, 'argument /list/1 is a function, not JSON data'],
    ['a bigint', { big: 10n }, 'argument /big is a bigint, not JSON data'],
    ['NaN', { x: { y: Number.NaN } }, 'argument /x/y is NaN, which JSON cannot hold'],
    ['Infinity', { x: Number.POSITIVE_INFINITY }, 'argument /x is Infinity, which JSON cannot hold'],
    ['a key with / and ~', { 'a/b~c': Symbol('s') }, 'argument /a~1b~0c is a symbol, not JSON data'],
  ])('refuses %s, naming where', (_what, args, message) => {
    expect(() => copyJsonArgs(args)).toThrow(ArgsNotJsonError);
    expect(() => copyJsonArgs(args)).toThrow(message);
  });

  it('refuses a cycle and nesting past the limit instead of recursing forever', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(() => copyJsonArgs(cyclic)).toThrow(`nests deeper than ${MAX_ARGS_DEPTH} levels`);
    let deep: unknown = 'bottom';
    for (let i = 0; i < MAX_ARGS_DEPTH + 1; i++) deep = [deep];
    expect(() => copyJsonArgs(deep)).toThrow(/nests deeper/);
    let fine: unknown = 'bottom';
    for (let i = 0; i < MAX_ARGS_DEPTH - 1; i++) fine = [fine];
    expect(copyJsonArgs(fine)).toEqual(fine);
  });

  it('keeps a "__proto__" key as data: the copy gets no new prototype', () => {
    // The attack: arguments parsed from a model's JSON carry "__proto__"; a naive copy assigns it and
    // the copy (which the tool sees) inherits from the attacker's object.
    const args = JSON.parse('{"path": "a.txt", "__proto__": {"isAdmin": true}}') as Record<string, unknown>;
    const copied = copyJsonArgs(args) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect(copied.isAdmin).toBeUndefined();
    expect(Object.keys(copied)).toEqual(['path', '__proto__']);
    expect(JSON.stringify(copied)).toBe('{"path":"a.txt","__proto__":{"isAdmin":true}}');
  });
});

describe('the dispatcher copies arguments', () => {
  it('refuses non-JSON arguments with where, and the tool never runs', async () => {
    const echo = echoTool();
    const d = makeDispatcher([echo], [{ name: 'alice', tools: ['echo'] }]);
    const result = await d.call({
      tool: 'echo',
      args: { text: 'x', when: new Date(0) },
      listener: 'alice',
      thread: 't',
    });
    expect(result).toMatchObject({
      status: 'refused',
      error: {
        code: 'InvalidArguments',
        message: 'arguments for echo must be plain JSON data: argument /when is a Date, not plain JSON data',
      },
    });
    expect(echo.runs).toHaveLength(0);
  });

  it('what the caller changes after the call started does not reach the tool', async () => {
    const echo = echoTool();
    const d = makeDispatcher([echo], [{ name: 'alice', tools: ['echo'] }]);
    const args = { text: 'before' };
    const pending = d.call({ tool: 'echo', args, listener: 'alice', thread: 't' });
    args.text = 'after';
    expect(await pending).toMatchObject({ status: 'ok', value: { text: 'before' } });
  });
});
