import { beforeAll, describe, expect, it } from 'vitest';
import { CalculationError } from '../../src/errors.ts';
import type { Dispatcher } from '../../src/tools/dispatcher.ts';
import calculateTool, { calculate } from '../../tools/calculate.ts';
import { loadMath } from '../../tools/lib/calc-parse.ts';
import { caught, makeContext, toolDispatcher } from './tool-helpers.ts';

let math: Awaited<ReturnType<typeof loadMath>> | undefined;
beforeAll(async () => {
  math = await loadMath();
});

function fails(expression: string): CalculationError {
  try {
    calculate(expression);
  } catch (error) {
    expect(error).toBeInstanceOf(CalculationError);
    return error as CalculationError;
  }
  throw new Error(
    `expected ${JSON.stringify(expression)} to fail, got ${JSON.stringify(calculate(expression))}`,
  );
}

describe('calculate: the seed examples', () => {
  it.each([
    ['2 + 2', 4],
    ['(10 + 5) * 3', 45],
    ['sqrt(16) + pi', 7.141592653589793],
    ['max(10, 20, 15)', 20],
    ['round(3.14159, 2)', 3.14],
    ['2 ** 10', 1024],
  ])('%s -> %s', async (expression, expected) => {
    const out = await calculateTool.run({ expression }, makeContext());
    expect(out).toEqual({ result: expected, expression });
  });
});

describe('calculate: Python semantics', () => {
  it.each([
    ['7 // 2', 3],
    ['-7 // 2', -4],
    ['7.5 // 2', 3],
    ['7 % 3', 1],
    ['-7 % 3', 2],
    ['10 % -3', -2],
    ['log(e)', 1],
    ['log(8, 2)', 3],
    ['log10(1000)', 3],
    ['2 < 3', true],
    ['1 < 2 < 3', true],
    ['3 < 2 < 5', false],
    ['2 == 2.0', true],
    ['1 != 1', false],
    ['0.1 + 0.2 == 0.3', false],
    ['-2 ** 2', -4],
    ['2 ** -1', 0.5],
    ['2 ** 3 ** 2', 512],
    ['round(2.5)', 2],
    ['round(3.5)', 4],
    ['round(2.675, 2)', 2.67],
    ['round(1234.5, -2)', 1200],
    ['round(-0.4)', 0],
    ['abs(-3) + min(4, 2) + max([1, 9, 3])', 14],
    ['sum([1, 2, 3])', 6],
    ['floor(2.9999999999999996)', 2],
    ['2.*3', 6],
    ['True + True', 2],
    ['0 or 5', 5],
    ['1 and 0', 0],
    ['not 0', true],
    ['sin(0) + cos(0) + tan(0)', 1],
    ['0x10 + 1e3', 1016],
    ['2 # a comment', 2],
  ])('%s -> %s', (expression, expected) => {
    expect(calculate(expression)).toBe(expected);
  });
});

describe('calculate: syntax errors say where', () => {
  it.each([
    ['2 +', 4],
    ['1 +* 2', 4],
    ['(1 + 2', 7],
    ['cos(0) +', 9],
    ['50%', 3],
    ['2 ^ 3', 3],
    ["'abc'", 1],
  ])('%s fails at column %i', (expression, column) => {
    const error = fails(expression);
    expect(error.message).toContain(`at column ${column}`);
    expect(error.details).toEqual({ column });
  });

  it('reports the column of the text as written, not of the rewritten text', () => {
    // `**` becomes one character and `//` four before mathjs sees the text.
    const error = fails('2 ** 3 // 4 +');
    expect(error.code).toBe('calculate.syntax');
    expect(error.message).toBe('syntax error: Unexpected end of expression at column 14');
  });
});

describe('calculate: sandbox', () => {
  it.each([
    ['f(x) = x + 1', 'calculate.not_allowed', /defining functions/],
    ['x = 1', 'calculate.not_allowed', /assignment/],
    ['1; 2', 'calculate.not_allowed', /one expression/],
    ['import(1)', 'calculate.unknown_name', /unknown function 'import'/],
    ['evaluate(1)', 'calculate.unknown_name', /unknown function 'evaluate'/],
    ['createUnit(1)', 'calculate.unknown_name', /unknown function 'createUnit'/],
    ['parse(1)', 'calculate.unknown_name', /unknown function 'parse'/],
    ['x + 1', 'calculate.unknown_name', /unknown name 'x'/],
    ['a.b', 'calculate.not_allowed', /property access/],
    ['[1, 2][1]', 'calculate.not_allowed', /indexing/],
    ['{a: 1}', 'calculate.not_allowed', /objects/],
    ['1:3', 'calculate.not_allowed', /ranges/],
    ['1 ? 2 : 3', 'calculate.not_allowed', /conditional/],
    ['5!', 'calculate.not_allowed', /factorial/],
    ['2pi', 'calculate.not_allowed', /implicit multiplication/],
    ['5 cm', 'calculate.not_allowed', /implicit multiplication/],
    ['sqrt', 'calculate.not_allowed', /is a function/],
    ['[1, 2]', 'calculate.not_allowed', /list/],
    ['"s"', 'calculate.not_allowed', /strings/],
  ])('%s is refused (%s)', (expression, code, message) => {
    const error = fails(expression);
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });

  it('the mathjs instance itself refuses import, createUnit, evaluate, parse, compile, simplify', () => {
    for (const name of [
      'import',
      'createUnit',
      'evaluate',
      'parse',
      'compile',
      'simplify',
      'derivative',
      'resolve',
      'chain',
      'reviver',
    ]) {
      const fn = (math! as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!;
      expect(() => fn('1 + 1'), name).toThrow(`${name} is disabled in calculate`);
    }
  });
});

describe('calculate: limits', () => {
  it('refuses an expression longer than 1,000 characters', () => {
    const error = fails(`1${'+1'.repeat(500)}`);
    expect(error.code).toBe('calculate.too_long');
    expect(error.message).toContain('1001 characters');
  });

  it('refuses brackets nested deeper than 50', () => {
    const error = fails(`${'('.repeat(51)}1${')'.repeat(51)}`);
    expect(error.code).toBe('calculate.too_complex');
    expect(error.message).toContain('at column 51');
  });

  it('refuses a tree deeper than the depth limit', () => {
    expect(fails(`${'-'.repeat(600)}1`).code).toBe('calculate.too_complex');
  });

  it('accepts a long flat sum inside the limits', () => {
    expect(calculate(`1${'+1'.repeat(499)}`)).toBe(500);
  });

  it('refuses an empty expression', async () => {
    const error = await caught(() => calculateTool.run({ expression: '   ' }, makeContext()));
    expect(error.code).toBe('calculate.empty');
  });

  it('does not run when the call is already cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await caught(() =>
      calculateTool.run({ expression: '1' }, makeContext({ signal: controller.signal })),
    );
    expect(error.code).toBe('calculate.aborted');
  });
});

describe('calculate: math errors are clear', () => {
  it.each([
    ['1 / 0', /division by zero in '1 \/ 0'/],
    ['7 // 0', /integer division or modulo by zero in '7 \/\/ 0'/],
    ['7 % 0', /modulo by zero/],
    ['sqrt(-1)', /math domain error in 'sqrt\(-1\)'/],
    ['log(0)', /math domain error/],
    ['0 ** -1', /cannot be raised to a negative power/],
    ['(-8) ** (1/3)', /complex number/],
    ['10 ** 400', /\(overflow\) in '10 \*\* 400'/],
    ['exp(1000)', /overflow/],
    ['round(1, 2.5)', /whole number of digits/],
    ['max()', /max\(\) takes at least 1 argument but got 0/],
    ['atan2(1)', /atan2\(\) takes 2 arguments but got 1/],
  ])('%s', (expression, message) => {
    const error = fails(expression);
    expect(error.code).toBe('calculate.math');
    expect(error.message).toMatch(message);
  });

  it('a non-finite result from the inf constant is refused as not finite', () => {
    expect(fails('inf - 1').code).toBe('calculate.not_finite');
  });
});

describe('calculate through the Dispatcher', () => {
  function dispatcher(): Dispatcher {
    return toolDispatcher({
      tools: [calculateTool],
      listener: { name: 'mathematician', tools: ['calculate'] },
      guard: () => {
        throw new Error('calculate has no guard and must not be judged by one');
      },
    });
  }
  const call = (d: Dispatcher, args: unknown) =>
    d.call({ tool: 'calculate', args, listener: 'mathematician', thread: 't1' });

  it('returns the value, a syntax error as an error result with its column, bad arguments as refused', async () => {
    const d = dispatcher();
    expect(await call(d, { expression: '2 ** 10' })).toEqual({
      status: 'ok',
      tool: 'calculate',
      value: { result: 1024, expression: '2 ** 10' },
    });
    const syntax = await call(d, { expression: '2 +' });
    expect(syntax).toMatchObject({ status: 'error', error: { code: 'calculate.syntax' } });
    expect(syntax.status !== 'ok' && syntax.error.message).toContain('at column 4');
    expect(await call(d, {})).toMatchObject({ status: 'refused', error: { code: 'InvalidArguments' } });
    expect(await call(d, { expression: 'x'.repeat(1001) })).toMatchObject({
      status: 'refused',
      error: { code: 'InvalidArguments' },
    });
  });
});
