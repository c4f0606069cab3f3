/**
 * calculate: evaluates one Python-style arithmetic expression and returns the number (or
 * true/false for a comparison). Parsing goes through a restricted mathjs instance (calc-parse),
 * evaluation through our own walker with Python semantics and size limits (calc-eval); see those
 * files for why it is safe and bounded.
 */
import { CalculationError } from '../src/errors.ts';
import type { ToolDefinition, ToolRunContext } from '../src/tools/types.ts';
import { checkSize, evaluateTree } from './lib/calc-eval.ts';
import { CALC_LIMITS, loadMath, parsePython } from './lib/calc-parse.ts';

export interface CalculateArgs {
  expression: string;
}

export interface CalculateResult {
  result: number | boolean | string;
  expression: string;
}

/** Pure entry point, shared by the tool and its tests: expression text -> result. */
export function calculate(expression: string): number | boolean {
  if (typeof expression !== 'string') {
    throw new CalculationError('calculate.empty', 'the expression must be a string');
  }
  const tree = parsePython(expression);
  checkSize(tree);
  const value = evaluateTree(tree);
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new CalculationError(
      'calculate.not_finite',
      `the result is not a finite number (${value}); check for overflow or an undefined operation`,
    );
  }
  // -0 reads as 0 to anyone but IEEE 754.
  return Object.is(value, -0) ? 0 : value;
}

const calculateTool: ToolDefinition<CalculateArgs, CalculateResult> = {
  name: 'calculate',
  description:
    'Evaluate one arithmetic expression written in Python syntax and return the exact number. Use it ' +
    'instead of doing arithmetic in your head. Operators: + - * / // (floor division) % (modulo) ** ' +
    '(power), comparisons < <= > >= == != (chainable, result true/false), and, or, not, parentheses. ' +
    'Functions: abs, round(x, digits), min, max, sum, sqrt, exp, log(x) (natural), log(x, base), ' +
    'log10, log2, sin, cos, tan, asin, acos, atan, atan2, hypot, floor, ceil, trunc, int, float, pow, ' +
    'degrees, radians (angles in radians). Constants: pi, e, tau, True, False. No variables, ' +
    'assignments, strings or ^ (use ** for powers). Example: {"expression": "round(sqrt(2) * 10, 3)"} ' +
    '-> {"result": 14.142, "expression": "round(sqrt(2) * 10, 3)"}.',
  args: {
    type: 'object',
    properties: {
      expression: {
        type: 'string',
        minLength: 1,
        maxLength: CALC_LIMITS.maxLength,
        description: 'A Python arithmetic expression, e.g. "(10 + 5) * 3" or "2 ** 10".',
      },
    },
    required: ['expression'],
    additionalProperties: false,
  },
  readOnly: true,
  capability: 'read',
  source: 'native',
  config: { type: 'object', properties: {} },
  async run(args: CalculateArgs, ctx: ToolRunContext): Promise<CalculateResult> {
    if (ctx.signal.aborted)
      throw new CalculationError('calculate.aborted', 'the call was cancelled before it ran');
    await loadMath();
    return { result: calculate(args.expression), expression: args.expression };
  },
};

export default calculateTool;
