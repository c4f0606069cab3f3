/**
 * Evaluates a parsed calculate expression with Python's semantics, by walking the mathjs AST.
 *
 * Why a walker rather than mathjs `evaluate`/`compile`: only the node types and operators listed
 * here exist, every name is looked up in two small tables (constants, functions), and nothing can
 * define, assign, index or import. Time is bounded without a timer: the text is at most 1,000
 * characters, the tree at most MAX_NODES nodes and MAX_DEPTH deep (checked before evaluating), and
 * every node does a bounded amount of work (no loops, no recursion the expression controls), so
 * evaluation is synchronous and short by construction.
 */
import type { MathNode } from 'mathjs';
import { CalculationError } from '../../src/errors.ts';
import { mathInstance } from './calc-parse.ts';
import { pyDiv, pyFloorDiv, pyMod, pyPow, pyRound } from './calc-python.ts';

export const EVAL_LIMITS = Object.freeze({ maxNodes: 1000, maxDepth: 500 });

type Value = number | boolean | number[];

/** Node shapes we read; mathjs's own types are wider than what the parser produces. */
interface AnyNode {
  type: string;
  value?: unknown;
  name?: string;
  fn?: string | AnyNode;
  op?: string;
  implicit?: boolean;
  args?: AnyNode[];
  params?: AnyNode[];
  conditionals?: string[];
  content?: AnyNode;
  items?: AnyNode[];
  toString(): string;
  forEach(callback: (child: AnyNode) => void): void;
}

const CONSTANTS: Record<string, number | boolean> = {
  pi: Math.PI,
  e: Math.E,
  tau: 2 * Math.PI,
  inf: Number.POSITIVE_INFINITY,
  True: true,
  False: false,
};

/** A node as Python would write it, for messages: the rewritten `./` and `^` were `//` and `**`. */
function display(node: AnyNode): string {
  return node
    .toString()
    .replace(/ \.\/ /g, ' // ')
    .replace(/\^/g, '**');
}

function mathError(message: string): never {
  throw new CalculationError('calculate.math', message);
}

function num(value: Value, where: string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  throw new CalculationError('calculate.not_allowed', `a list cannot be used as a number in '${where}'`);
}

function truthy(value: Value): boolean {
  return Array.isArray(value) ? value.length > 0 : Boolean(value);
}

type Fn = { arity: [number, number]; lists?: boolean; call: (a: number[], where: string) => number };

/** Python raises "math domain error" where the function is undefined; checked before computing. */
function domain(ok: boolean, where: string, compute: () => number): number {
  if (!ok) mathError(`math domain error in '${where}'`);
  return compute();
}

/** Python's math functions (and the built-ins abs, round, min, max, sum, pow, int, float). */
const FUNCTIONS: Record<string, Fn> = {
  abs: { arity: [1, 1], call: ([x]) => Math.abs(x!) },
  round: {
    arity: [1, 2],
    call: ([x, n], where) => {
      if (n !== undefined && !Number.isInteger(n))
        mathError(`round() needs a whole number of digits in '${where}'`);
      return pyRound(x!, n);
    },
  },
  min: { arity: [1, Number.POSITIVE_INFINITY], lists: true, call: (a) => Math.min(...a) },
  max: { arity: [1, Number.POSITIVE_INFINITY], lists: true, call: (a) => Math.max(...a) },
  sum: { arity: [0, Number.POSITIVE_INFINITY], lists: true, call: (a) => a.reduce((s, x) => s + x, 0) },
  sqrt: { arity: [1, 1], call: ([x], w) => domain(x! >= 0, w, () => mathInstance().sqrt(x!) as number) },
  exp: { arity: [1, 1], call: ([x]) => mathInstance().exp(x!) },
  log: {
    arity: [1, 2],
    call: ([x, base], w) =>
      domain(x! > 0 && (base === undefined || base > 0), w, () => {
        if (base === undefined) return mathInstance().log(x!) as number;
        if (base === 1) mathError(`division by zero in '${w}' (log base 1)`);
        return (mathInstance().log(x!) as number) / (mathInstance().log(base) as number);
      }),
  },
  log10: { arity: [1, 1], call: ([x], w) => domain(x! > 0, w, () => mathInstance().log10(x!) as number) },
  log2: { arity: [1, 1], call: ([x], w) => domain(x! > 0, w, () => mathInstance().log2(x!) as number) },
  sin: { arity: [1, 1], call: ([x]) => mathInstance().sin(x!) },
  cos: { arity: [1, 1], call: ([x]) => mathInstance().cos(x!) },
  tan: { arity: [1, 1], call: ([x]) => mathInstance().tan(x!) },
  asin: {
    arity: [1, 1],
    call: ([x], w) => domain(Math.abs(x!) <= 1, w, () => mathInstance().asin(x!) as number),
  },
  acos: {
    arity: [1, 1],
    call: ([x], w) => domain(Math.abs(x!) <= 1, w, () => mathInstance().acos(x!) as number),
  },
  atan: { arity: [1, 1], call: ([x]) => mathInstance().atan(x!) },
  atan2: { arity: [2, 2], call: ([y, x]) => mathInstance().atan2(y!, x!) },
  hypot: { arity: [0, Number.POSITIVE_INFINITY], call: (a) => Math.hypot(...a) },
  floor: { arity: [1, 1], call: ([x]) => Math.floor(x!) },
  ceil: { arity: [1, 1], call: ([x]) => Math.ceil(x!) },
  trunc: { arity: [1, 1], call: ([x]) => Math.trunc(x!) },
  int: { arity: [1, 1], call: ([x]) => Math.trunc(x!) },
  float: { arity: [1, 1], call: ([x]) => x! },
  pow: { arity: [2, 2], call: ([x, y], w) => pyPow(x!, y!, w) },
  degrees: { arity: [1, 1], call: ([x]) => (x! * 180) / Math.PI },
  radians: { arity: [1, 1], call: ([x]) => (x! * Math.PI) / 180 },
};

const NOT_ALLOWED: Record<string, string> = {
  AssignmentNode: 'assignment (x = ...) is not allowed; calculate evaluates one expression',
  FunctionAssignmentNode: 'defining functions (f(x) = ...) is not allowed',
  BlockNode: "only one expression is allowed (found ';' or a line break)",
  AccessorNode: 'property access and indexing (a.b, a[1]) are not allowed',
  IndexNode: 'indexing is not allowed',
  ObjectNode: 'objects ({...}) are not allowed',
  RangeNode: 'ranges (a:b) are not allowed',
  ConditionalNode: "the conditional 'a ? b : c' is not allowed",
};

const OPERATOR_TEXT: Record<string, string> = {
  factorial: "'!' (factorial) is not an operator in Python; there is no factorial here",
  ctranspose: "the transpose operator ' is not supported",
  transpose: "the transpose operator ' is not supported",
  to: "unit conversion ('to', 'in') is not supported",
  bitAnd: "bitwise '&' is not supported",
  bitOr: "bitwise '|' is not supported",
  bitNot: "bitwise '~' is not supported",
  bitXor: "bitwise 'xor' is not supported",
  xor: "'xor' is not a Python operator",
  leftShift: "'<<' is not supported",
  rightArithShift: "'>>' is not supported",
  rightLogShift: "'>>>' is not supported",
  dotMultiply: "'.*' is not a Python operator",
  dotPow: "'.^' is not a Python operator",
  nullish: "'??' is not a Python operator",
};

/** Refuses trees over the node or depth limit before any evaluation; recursion stops at the limit. */
export function checkSize(root: MathNode): void {
  let nodes = 0;
  const visit = (node: AnyNode, depth: number) => {
    nodes++;
    if (nodes > EVAL_LIMITS.maxNodes) {
      throw new CalculationError(
        'calculate.too_complex',
        `the expression has more than ${EVAL_LIMITS.maxNodes} parts`,
      );
    }
    if (depth > EVAL_LIMITS.maxDepth) {
      throw new CalculationError(
        'calculate.too_complex',
        `the expression nests deeper than ${EVAL_LIMITS.maxDepth} levels`,
      );
    }
    node.forEach((child) => {
      visit(child, depth + 1);
    });
  };
  visit(root as unknown as AnyNode, 1);
}

function compare(op: string, a: number, b: number): boolean {
  switch (op) {
    case 'smaller':
      return a < b;
    case 'smallerEq':
      return a <= b;
    case 'larger':
      return a > b;
    case 'largerEq':
      return a >= b;
    case 'equal':
      return a === b;
    case 'unequal':
      return a !== b;
    default:
      throw new CalculationError('calculate.not_allowed', `comparison ${op} is not supported`);
  }
}

/** Arithmetic result from finite operands that is not finite: Python raises instead of returning inf/nan. */
function finite(result: number, inputs: number[], where: string): number {
  if (!Number.isFinite(result) && inputs.every(Number.isFinite)) {
    mathError(
      Number.isNaN(result) ? `math domain error in '${where}'` : `result too large (overflow) in '${where}'`,
    );
  }
  return result;
}

function evaluateOperator(node: AnyNode): Value {
  const fn = node.fn as string;
  const where = display(node);
  const args = node.args ?? [];
  if (node.implicit) {
    throw new CalculationError(
      'calculate.not_allowed',
      `implicit multiplication ('${where}') is not allowed; write the * explicitly`,
    );
  }
  switch (fn) {
    case 'and': {
      const left = evaluateNode(args[0]!);
      return truthy(left) ? evaluateNode(args[1]!) : left;
    }
    case 'or': {
      const left = evaluateNode(args[0]!);
      return truthy(left) ? left : evaluateNode(args[1]!);
    }
    case 'not':
      return !truthy(evaluateNode(args[0]!));
  }
  const values = args.map((a) => num(evaluateNode(a), where));
  const [a, b] = values as [number, number];
  switch (fn) {
    case 'unaryMinus':
      return -a;
    case 'unaryPlus':
      return a;
    case 'add':
      return finite(a + b, values, where);
    case 'subtract':
      return finite(a - b, values, where);
    case 'multiply':
      return finite(a * b, values, where);
    case 'divide':
      return finite(pyDiv(a, b, where), values, where);
    case 'dotDivide':
      return finite(pyFloorDiv(a, b, where), values, where);
    case 'mod':
      return finite(pyMod(a, b, where), values, where);
    case 'pow':
      return finite(pyPow(a, b, where), values, where);
    case 'smaller':
    case 'smallerEq':
    case 'larger':
    case 'largerEq':
    case 'equal':
    case 'unequal':
      return compare(fn, a, b);
  }
  throw new CalculationError(
    'calculate.not_allowed',
    OPERATOR_TEXT[fn] ?? `the operator '${node.op ?? fn}' is not supported`,
  );
}

function evaluateFunction(node: AnyNode): Value {
  const callee = node.fn as AnyNode;
  const where = display(node);
  if (callee.type !== 'SymbolNode' || callee.name === undefined) {
    throw new CalculationError('calculate.not_allowed', `only named functions can be called, not '${where}'`);
  }
  const name = callee.name;
  const fn = Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name] : undefined;
  if (!fn) {
    throw new CalculationError(
      'calculate.unknown_name',
      `unknown function '${name}'; available: ${Object.keys(FUNCTIONS).join(', ')}`,
    );
  }
  const raw = (node.args ?? []).map(evaluateNode);
  let numbers: number[];
  if (fn.lists && raw.length === 1 && Array.isArray(raw[0])) numbers = raw[0];
  else numbers = raw.map((v) => num(v, where));
  const [lo, hi] = fn.arity;
  if (numbers.length < lo || numbers.length > hi) {
    const expected =
      lo === hi ? `${lo}` : hi === Number.POSITIVE_INFINITY ? `at least ${lo}` : `${lo} to ${hi}`;
    throw new CalculationError(
      'calculate.math',
      `${name}() takes ${expected} argument${/^(at least )?1$/.test(expected) ? '' : 's'} but got ${numbers.length} in '${where}'`,
    );
  }
  return finite(fn.call(numbers, where), numbers, where);
}

function evaluateNode(node: AnyNode): Value {
  switch (node.type) {
    case 'ConstantNode': {
      const v = node.value;
      if (typeof v === 'boolean') return v;
      if (typeof v === 'number' && Number.isFinite(v)) return v;
      throw new CalculationError('calculate.not_allowed', `the value ${node.toString()} is not supported`);
    }
    case 'SymbolNode': {
      const name = node.name ?? '';
      if (Object.hasOwn(CONSTANTS, name)) return CONSTANTS[name]!;
      if (Object.hasOwn(FUNCTIONS, name)) {
        throw new CalculationError(
          'calculate.not_allowed',
          `'${name}' is a function; call it, e.g. ${name}(...)`,
        );
      }
      throw new CalculationError(
        'calculate.unknown_name',
        `unknown name '${name}'; available constants: ${Object.keys(CONSTANTS).join(', ')}`,
      );
    }
    case 'ParenthesisNode':
      return evaluateNode(node.content!);
    case 'OperatorNode':
      return evaluateOperator(node);
    case 'FunctionNode':
      return evaluateFunction(node);
    case 'RelationalNode': {
      // Python chains comparisons: a < b < c is (a < b) and (b < c), each operand evaluated once.
      const params = node.params ?? [];
      const ops = node.conditionals ?? [];
      let left = num(evaluateNode(params[0]!), display(node));
      for (let i = 0; i < ops.length; i++) {
        const right = num(evaluateNode(params[i + 1]!), display(node));
        if (!compare(ops[i]!, left, right)) return false;
        left = right;
      }
      return true;
    }
    case 'ArrayNode': {
      const items = (node.items ?? []).map((item) => evaluateNode(item));
      return items.map((v) => num(v, display(node)));
    }
  }
  throw new CalculationError(
    'calculate.not_allowed',
    NOT_ALLOWED[node.type] ?? `${node.type} is not allowed`,
  );
}

/** Evaluates a tree already through checkSize. Lists are only valid as the argument of min, max or sum. */
export function evaluateTree(root: MathNode): number | boolean {
  const value = evaluateNode(root as unknown as AnyNode);
  if (Array.isArray(value)) {
    throw new CalculationError(
      'calculate.not_allowed',
      'a list can only be the argument of min, max or sum; calculate returns one number or true/false',
    );
  }
  return value;
}
