/**
 * Python-style expression text -> a mathjs AST, through a restricted mathjs instance.
 *
 * mathjs does not speak Python: `**` is `^`, `//` does not exist, `^` means power (XOR in Python),
 * `'` is a transpose and `50%` a percentage. So the text is first scanned once, left to right:
 * Python operators are rewritten into mathjs ones (`**` -> `^`, `//` -> `./`, which calc-eval
 * evaluates as floor division), and what Python would not accept is refused with its column. Each
 * character of the rewritten text remembers the column it came from, so a mathjs syntax error
 * ("(char N)") is reported at the column the caller wrote.
 */
import type { MathJsInstance, MathNode } from 'mathjs';
import { CalculationError } from '../../src/errors.ts';

export const CALC_LIMITS = Object.freeze({
  /** Characters in one expression. */
  maxLength: 1000,
  /** Nesting of ( [ { in the text; checked before parsing so the recursive parser cannot overflow. */
  maxBracketDepth: 50,
});

/**
 * The one mathjs instance calculate uses: plain JS numbers and `predictable` (sqrt(-1) is NaN, not a
 * complex number). Every entry point that could parse, compile or define something is replaced by
 * a function that throws, so even a bug in the evaluator could not reach them; `parse` is captured
 * before that for our own use. (Rounding and comparing are done in calc-eval/calc-python, because
 * mathjs's tolerance-based floor, ceil and == differ from Python's exact ones.)
 *
 * Loaded on the first calculation, from mathjs's number-only build: mathjs costs tens of MB of
 * memory, which a daemon that never calculates should not pay.
 */
let instance: { math: MathJsInstance; parse: MathJsInstance['parse'] } | undefined;

export async function loadMath(): Promise<MathJsInstance> {
  if (!instance) {
    const { all, create } = await import('mathjs/number');
    const math = create(all!, { number: 'number', predictable: true });
    const parse = math.parse;
    math.import(Object.fromEntries(DISABLED.map((name) => [name, disabled(name)])), { override: true });
    instance = { math, parse };
  }
  return instance.math;
}

/** The loaded instance; loadMath() must have resolved first (calculate's run does that). */
export function mathInstance(): MathJsInstance {
  if (!instance) throw new CalculationError('calculate.not_loaded', 'calculate: mathjs is not loaded yet');
  return instance.math;
}

const DISABLED = [
  'import',
  'createUnit',
  'evaluate',
  'parse',
  'simplify',
  'simplifyConstant',
  'simplifyCore',
  'derivative',
  'resolve',
  'compile',
  'chain',
  'reviver',
  'replacer',
  'parser',
  'rationalize',
  'symbolicEqual',
  'leafCount',
];

const disabled = (name: string) => () => {
  throw new CalculationError('calculate.not_allowed', `${name} is disabled in calculate`);
};

/** A character of the rewritten text and the 0-based index in the original it came from. */
interface Rewritten {
  text: string;
  origin: number[];
}

function fail(code: 'calculate.syntax' | 'calculate.not_allowed', index: number, message: string): never {
  const column = index + 1;
  throw new CalculationError(code, `${message} at column ${column}`, { column });
}

const OPERAND_START = /[0-9.A-Za-z_([+-]/;

/** Rewrites Python operators into mathjs ones and refuses the ones Python does not have. */
export function rewrite(expression: string): Rewritten {
  let text = '';
  const origin: number[] = [];
  const emit = (s: string, from: number) => {
    text += s;
    for (let k = 0; k < s.length; k++) origin.push(from);
  };
  let depth = 0;
  for (let i = 0; i < expression.length; i++) {
    const c = expression[i]!;
    const next = expression[i + 1];
    switch (c) {
      case '*':
        if (next === '*') {
          emit('^', i);
          i++;
        } else emit('*', i);
        break;
      case '/':
        if (next === '/') {
          // Spaces keep `2//3` from reading as the number `2.` followed by `/`.
          emit(' ./ ', i);
          i++;
        } else emit('/', i);
        break;
      case '.':
        // Python's `2.*3` is `2. * 3`; mathjs would read `.*` as one operator.
        emit(next === '*' || next === '/' || next === '^' ? '. ' : '.', i);
        break;
      case '^':
        fail(
          'calculate.not_allowed',
          i,
          "'^' is bitwise XOR in Python and is not supported; use ** for powers",
        );
        break;
      case "'":
      case '"':
        fail('calculate.not_allowed', i, 'strings are not supported');
        break;
      case '%': {
        // mathjs reads `50%` as a percentage; in Python `%` is always modulo and needs a right operand.
        let j = i + 1;
        while (expression[j] === ' ' || expression[j] === '\t') j++;
        const after = expression[j];
        if (after === undefined || !OPERAND_START.test(after))
          fail('calculate.syntax', i, "'%' (modulo) needs a right operand");
        emit('%', i);
        break;
      }
      case '(':
      case '[':
      case '{':
        depth++;
        if (depth > CALC_LIMITS.maxBracketDepth) {
          throw new CalculationError(
            'calculate.too_complex',
            `brackets nest deeper than ${CALC_LIMITS.maxBracketDepth} levels at column ${i + 1}`,
            { column: i + 1 },
          );
        }
        emit(c, i);
        break;
      case ')':
      case ']':
      case '}':
        depth = Math.max(0, depth - 1);
        emit(c, i);
        break;
      default:
        emit(c, i);
    }
  }
  return { text, origin };
}

/** Parses a Python-style expression; throws CalculationError with the column on bad input. */
export function parsePython(expression: string): MathNode {
  if (expression.trim() === '') throw new CalculationError('calculate.empty', 'the expression is empty');
  if (expression.length > CALC_LIMITS.maxLength) {
    throw new CalculationError(
      'calculate.too_long',
      `the expression is ${expression.length} characters long; the limit is ${CALC_LIMITS.maxLength}`,
    );
  }
  const { text, origin } = rewrite(expression);
  try {
    if (!instance) throw new CalculationError('calculate.not_loaded', 'calculate: mathjs is not loaded yet');
    return instance.parse(text);
  } catch (error) {
    const char = (error as { char?: unknown }).char;
    if (error instanceof SyntaxError && typeof char === 'number') {
      // mathjs counts from 1 in the rewritten text; map back to the caller's text.
      const index = char - 1 < origin.length ? origin[char - 1]! : expression.length;
      // Speak Python in the message too: the rewritten `^` and `./` were `**` and `//`.
      const what = error.message
        .replace(/\s*\(char \d+\)\s*$/, '')
        .replace(/\.\//g, '//')
        .replace(/\^/g, '**');
      fail('calculate.syntax', index, `syntax error: ${what}`);
    }
    if (error instanceof RangeError) {
      throw new CalculationError('calculate.too_complex', 'the expression is nested too deeply to parse');
    }
    const message = error instanceof Error ? error.message : String(error);
    throw new CalculationError('calculate.syntax', `syntax error: ${message}`);
  }
}
