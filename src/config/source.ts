/**
 * The parsed organism.yaml together with what maps a key path back to `file:line:column`.
 * Every issue the loader reports goes through `ConfigSource.issue`, so every message carries a
 * position, whichever stage (YAML, env, schema, semantics, modules) found it.
 */
import { type Document, isMap, isNode, isPair, isScalar, isSeq, type LineCounter, type Node } from 'yaml';
import type { ConfigIssue } from '../errors.ts';

/** A path into the config: map keys and list indexes, as in `['listeners', 0, 'trust']`. */
export type KeyPath = readonly (string | number)[];

/** `['listeners', 0, 'trust']` -> `listeners[0].trust`. */
export function formatPath(path: KeyPath): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}

/** ajv's instancePath (`/listeners/0/trust`) -> `['listeners', 0, 'trust']`. */
export function pointerToPath(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((raw) => {
      const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      return /^(0|[1-9][0-9]*)$/.test(seg) ? Number(seg) : seg;
    });
}

export class ConfigSource {
  /** Nodes whose value came from `${VAR}` interpolation: their values are never echoed in messages. */
  readonly interpolated = new WeakSet<Node>();

  constructor(
    /** The file name as shown to the user in every issue. */
    readonly file: string,
    /** The file's text, for finding positions inside a scalar. */
    readonly text: string,
    readonly doc: Document,
    readonly lines: LineCounter,
  ) {}

  /** The YAML node at `path`, or undefined when the path is not in the file (a default, a missing key). */
  node(path: KeyPath): Node | undefined {
    const found = path.length === 0 ? this.doc.contents : this.doc.getIn(path as (string | number)[], true);
    return isNode(found) ? found : undefined;
  }

  /** The key node of the map entry at `path` (for unknown keys, duplicate names...). */
  keyNode(path: KeyPath): Node | undefined {
    if (path.length === 0) return undefined;
    const parent = this.node(path.slice(0, -1));
    const last = path[path.length - 1];
    if (!isMap(parent)) return undefined;
    for (const pair of parent.items) {
      if (isPair(pair) && isScalar(pair.key) && pair.key.value === last) return pair.key;
    }
    return undefined;
  }

  /**
   * Line and column for `path`: the key when asked (or when the value has no position), else the
   * value; a path not in the file falls back to its nearest ancestor that is.
   */
  position(path: KeyPath, at: 'key' | 'value' = 'value'): { line: number; column: number } | undefined {
    for (let n = path.length; n >= 0; n--) {
      const sub = path.slice(0, n);
      const preferKey = at === 'key' || n < path.length;
      const node = (preferKey ? this.keyNode(sub) : undefined) ?? this.node(sub) ?? this.keyNode(sub);
      const offset = node?.range?.[0];
      if (offset !== undefined) return this.at(offset);
    }
    return undefined;
  }

  /** 1-based line and column of a character offset in the file. */
  at(offset: number): { line: number; column: number } {
    const { line, col } = this.lines.linePos(offset);
    return { line, column: col };
  }

  issue(path: KeyPath, message: string, at: 'key' | 'value' = 'value'): ConfigIssue {
    const pos = this.position(path, at);
    return { file: this.file, ...(pos ?? {}), path: formatPath(path), message };
  }

  /** True when the value at `path` (or any part of it) came from the environment. */
  isInterpolated(path: KeyPath): boolean {
    const node = this.node(path);
    if (!node) return false;
    if (this.interpolated.has(node)) return true;
    let hit = false;
    const walk = (n: unknown): void => {
      if (hit || !isNode(n)) return;
      if (this.interpolated.has(n)) hit = true;
      else if (isMap(n) || isSeq(n)) for (const item of n.items) walk(isPair(item) ? item.value : item);
    };
    walk(node);
    return hit;
  }
}
