/** docs/reference/errors.md is what src/errors.ts renders, and names every error class the module exports. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as errors from '../../src/errors.ts';
import { readErrorClasses, renderErrorsReference } from '../../src/reference/errors.ts';
import { referencePath } from '../../src/reference/files.ts';

const PAGE = referencePath('errors.md');

describe('docs/reference/errors.md', () => {
  it('is exactly what src/errors.ts renders (run npx tsx src/reference/update.ts)', () => {
    expect(readFileSync(PAGE, 'utf8')).toBe(renderErrorsReference());
  });

  it('reads exactly the error classes errors.ts exports, each with its own codes', () => {
    const exported = Object.entries(errors)
      .filter(([, value]) => typeof value === 'function' && value.prototype instanceof Error)
      .map(([name]) => name)
      .sort();
    const classes = readErrorClasses();
    expect(classes.map((c) => c.name).sort()).toEqual(exported);
    const byName = new Map(classes.map((c) => [c.name, c.codes]));
    expect(exported.length).toBeGreaterThan(40);
    // Codes of classes whose constructor takes no code: what an instance carries is what the page says.
    expect(byName.get('BusyError')).toEqual([new errors.BusyError('x').code]);
    expect(byName.get('RoutingError')).toEqual([new errors.RoutingError().code]);
    expect(byName.get('ConfigError')).toEqual([new errors.ConfigError([]).code]);
    expect(byName.get('FeatureModuleError')).toEqual([new errors.FeatureModuleError('m', 'x').code]);
    // Union-typed classes list their whole union, not a neighbour's.
    expect(byName.get('KvError')).toContain('kv.locked');
    expect(byName.get('KvError')!.every((code) => code.startsWith('kv.'))).toBe(true);
    expect(byName.get('McpSessionError')).toEqual(['mcp.session_not_found', 'mcp.session_limit']);
    for (const c of classes) {
      if (c.name !== 'OrganismError') expect(c.codes.length, c.name).toBeGreaterThan(0);
      expect(c.name === 'OrganismError' || c.doc.length > 0, `${c.name} has a doc comment`).toBe(true);
    }
  });

  it('reads a union of codes whose members carry doc comments, and ignores codes named in comments', () => {
    const source = `export type DemoCode =
  | 'demo.one'
  /** Said of the second. */
  | 'demo.two';
/** A demo. */
export class DemoError extends OrganismError<DemoCode> {}

/** Like fixedCode('other.code', ...), once. */
export class OnceError extends fixedCode('demo.once', () => ['once']) {}
`;
    expect(readErrorClasses(source)).toEqual([
      { name: 'DemoError', codes: ['demo.one', 'demo.two'], doc: 'A demo.' },
      { name: 'OnceError', codes: ['demo.once'], doc: "Like fixedCode('other.code', ...), once." },
    ]);
  });

  it('says when each class happens, and lists the HTTP API codes with their status', () => {
    const page = readFileSync(PAGE, 'utf8');
    expect(page).toContain(
      '### BusyError\n\nCodes: `bus.busy`.\n\nA queue is full; the caller should retry later',
    );
    expect(page).toContain('| 401 | `auth.required` |');
    expect(page).toContain('| `kv.locked` | [`KvError`](#kverror) |');
  });
});
