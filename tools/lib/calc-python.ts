/**
 * Python's float arithmetic where it differs from JavaScript's: `/`, `//` and `%` by zero raise,
 * `%` takes the sign of the divisor, `//` floors, `**` refuses 0 to a negative power and a complex
 * result, and round() rounds the exact binary value half to even. Ported from CPython's
 * Objects/floatobject.c (float_div, _float_div_mod, float_pow, double_round) so results match.
 */
import { CalculationError } from '../../src/errors.ts';

function zeroDivision(message: string, where: string): never {
  throw new CalculationError('calculate.math', `${message} in '${where}'`);
}

export function pyDiv(a: number, b: number, where: string): number {
  if (b === 0) zeroDivision('division by zero', where);
  return a / b;
}

/** CPython _float_div_mod: [floor division, modulo]. */
function divMod(vx: number, wx: number): [number, number] {
  let mod = vx % wx; // fmod
  let div = (vx - mod) / wx;
  if (mod) {
    if (wx < 0 !== mod < 0) {
      mod += wx;
      div -= 1.0;
    }
  } else {
    mod = wx < 0 ? -0 : 0;
  }
  let floordiv: number;
  if (div) {
    floordiv = Math.floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = vx / wx < 0 || Object.is(vx / wx, -0) ? -0 : 0;
  }
  return [floordiv, mod];
}

export function pyFloorDiv(a: number, b: number, where: string): number {
  if (b === 0) zeroDivision('integer division or modulo by zero', where);
  return divMod(a, b)[0];
}

export function pyMod(a: number, b: number, where: string): number {
  if (b === 0) zeroDivision('integer division or modulo by zero', where);
  return divMod(a, b)[1];
}

export function pyPow(a: number, b: number, where: string): number {
  if (a === 0 && b < 0) zeroDivision('0.0 cannot be raised to a negative power', where);
  if (a < 0 && Number.isFinite(b) && !Number.isInteger(b)) {
    throw new CalculationError(
      'calculate.math',
      `a negative number to a fractional power is a complex number, which calculate does not support ('${where}')`,
    );
  }
  return a ** b;
}

/** x = mantissa * 2^exponent exactly, mantissa a signed integer. */
function decompose(x: number): { mantissa: bigint; exponent: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  const fraction = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  const negative = hi >>> 31 === 1;
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = biased === 0 ? -1074 : biased - 1075;
  return { mantissa: negative ? -mantissa : mantissa, exponent };
}

/** Digits beyond which rounding a double changes nothing (or leaves only zero). */
const ROUND_DIGITS_LIMIT = 400;

/**
 * Python's round(x, n): the exact binary value of x rounded half to even at n decimal digits
 * (so round(2.5) is 2 and round(2.675, 2) is 2.67, as in Python), then read back as the nearest
 * double. BigInt keeps it exact; |n| is capped so the work stays bounded.
 */
export function pyRound(x: number, ndigits?: number): number {
  if (!Number.isFinite(x)) {
    if (ndigits === undefined) {
      throw new CalculationError('calculate.math', `cannot round ${x} to an integer`);
    }
    return x;
  }
  const n = ndigits ?? 0;
  if (x === 0 || n > ROUND_DIGITS_LIMIT) return x;
  if (n < -ROUND_DIGITS_LIMIT) return x < 0 ? -0 : 0;
  const { mantissa, exponent } = decompose(x);
  let numerator = mantissa < 0n ? -mantissa : mantissa;
  let denominator = 1n;
  if (exponent >= 0) numerator <<= BigInt(exponent);
  else denominator <<= BigInt(-exponent);
  if (n >= 0) numerator *= 10n ** BigInt(n);
  else denominator *= 10n ** BigInt(-n);
  let quotient = numerator / denominator;
  const twice = 2n * (numerator % denominator);
  if (twice > denominator || (twice === denominator && (quotient & 1n) === 1n)) quotient += 1n;
  const digits = `${x < 0 ? '-' : ''}${quotient}`;
  const result = Number(`${digits}e${-n}`);
  return result === 0 && x < 0 ? -0 : result;
}
