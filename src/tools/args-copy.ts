/**
 * The copy of a call's arguments that is validated, gets the schema's defaults and is what the
 * tool sees (dispatcher step 6), so nothing the caller does to its object afterwards reaches the
 * tool. Only JSON data is copied, as JSON.stringify would write it (an undefined property left
 * out, undefined in an array as null); anything else is refused, saying where. structuredClone did
 * this before at several times the cost, and let Dates, Maps, NaN and cycles through.
 */
import { setOwn } from '../plain-object.ts';

/** Deeper than this is refused: no schema a tool has needs it, and a cycle would never end. */
export const MAX_ARGS_DEPTH = 256;

export class ArgsNotJsonError extends Error {
  /** Where in the arguments, as a JSON pointer ("" for the whole). */
  readonly at: string;

  constructor(path: readonly (string | number)[], what: string) {
    const at = path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
    super(`${at === '' ? 'the arguments' : `argument ${at}`} ${what}`);
    this.name = 'ArgsNotJsonError';
    this.at = at;
  }
}

/** A deep copy of `value` if it is JSON data; throws ArgsNotJsonError naming the first part that is not. */
export function copyJsonArgs(value: unknown): unknown {
  return copy(value, [], 0);
}

/** `path` is where `value` sits, kept as a stack so a pointer is only spelled out for an error. */
function copy(value: unknown, path: (string | number)[], depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Number.isFinite(value)) return value;
      throw new ArgsNotJsonError(path, `is ${value}, which JSON cannot hold`);
    case 'object':
      break;
    default:
      throw new ArgsNotJsonError(path, `is a ${typeof value}, not JSON data`);
  }
  if (value === null) return null;
  if (depth >= MAX_ARGS_DEPTH) throw new ArgsNotJsonError(path, `nests deeper than ${MAX_ARGS_DEPTH} levels`);
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (item === undefined || item === null) {
        out[i] = null;
        continue;
      }
      path.push(i);
      out[i] = copy(item, path, depth + 1);
      path.pop();
    }
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    const kind = (proto as { constructor?: { name?: string } }).constructor?.name || 'object';
    throw new ArgsNotJsonError(path, `is a ${kind}, not plain JSON data`);
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined) continue;
    path.push(key);
    const copied = copy(item, path, depth + 1);
    path.pop();
    setOwn(out, key, copied); // a "__proto__" key stays data
  }
  return out;
}
