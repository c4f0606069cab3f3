/**
 * The compiled package checks a listener's payload schema against draft 2020-12 with the
 * meta-schema validator `npm run build` precompiled (bin/precompile-validators.js) instead of
 * letting ajv compile the meta-schema at start. A schema must be refused or accepted exactly as
 * ajv's own check does, with the same message; a schema naming another `$schema` is left to ajv.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { compileValidator, PRECOMPILED_META_VALIDATOR } from '../../src/xml/validate.ts';

const DIST_XML = fileURLToPath(new URL('../../dist/src/xml/', import.meta.url));
const dist = (await import(`${DIST_XML}validate.js`)) as typeof import('../../src/xml/validate.ts');

const SCHEMAS: Record<string, unknown>[] = [
  { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  { type: 'nope' },
  { type: ['string', 'bogus'] },
  { properties: { a: { minimum: 'x' } } },
  { required: 'name' },
  { items: { enum: 5 } },
  { $defs: { x: { type: 1 } }, $ref: '#/$defs/x' },
  { properties: { a: { pattern: 7 } } },
  { additionalProperties: 'no' },
  { type: 'object', properties: { when: { type: 'string', format: 'date-time' } } },
  { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'nope' },
  { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' },
  { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' },
  { $schema: 5, type: 'object' } as Record<string, unknown>,
];

/** The SchemaError message compiling `schema` gives, or 'ok'. */
function outcome(compile: typeof compileValidator, schema: Record<string, unknown>): string {
  try {
    compile('payload', structuredClone(schema));
    return 'ok';
  } catch (error) {
    return (error as Error).message;
  }
}

describe('the precompiled payload meta-schema check', () => {
  it('is built for the ajv installed, and the compiled runtime uses it in place of ajv compiling the meta-schema', () => {
    const file = `${DIST_XML}${PRECOMPILED_META_VALIDATOR}`;
    expect(existsSync(file)).toBe(true);
    const require = createRequire(import.meta.url);
    const version = JSON.parse(readFileSync(require.resolve('ajv/package.json'), 'utf8')).version;
    expect((require(file) as { ajvVersion: string }).ajvVersion).toBe(version);
    dist.compileValidator('probe', { type: 'object' });
    expect(dist.payloadAjv().opts.validateSchema).toBe(false);
  });

  it('refuses and accepts every schema as ajv itself does, with the same message', () => {
    const refused = SCHEMAS.map((schema) => outcome(compileValidator, schema)).filter((m) => m !== 'ok');
    expect(refused.length).toBeGreaterThanOrEqual(10);
    for (const schema of SCHEMAS) {
      expect(outcome(dist.compileValidator, schema), JSON.stringify(schema)).toBe(
        outcome(compileValidator, schema),
      );
    }
    expect(outcome(dist.compileValidator, { type: 'nope' })).toMatch(
      /^payload schema for <payload> is invalid: schema is invalid: data\/type must be equal to one of the allowed values/,
    );
  });

  it('is not kept while unused: collected after the schemas compile, and loaded again for the next one', async () => {
    // In a process of its own with --expose-gc; the script sees each load of the validator's file
    // (without holding it) to tell when the GC has taken it.
    const script = `
      import Module from 'node:module';
      const registry = new FinalizationRegistry(() => { collected++; });
      let loaded = 0;
      let collected = 0;
      const load = Module._load;
      Module._load = function (request, ...rest) {
        const out = load.call(this, request, ...rest);
        if (String(request).endsWith(${JSON.stringify(PRECOMPILED_META_VALIDATOR)})) {
          loaded++;
          registry.register(out, 'meta');
        }
        return out;
      };
      const { compileValidator } = await import(${JSON.stringify(pathToFileURL(`${DIST_XML}validate.js`).href)});
      compileValidator('first', { type: 'object' });
      for (let i = 0; i < 20 && collected === 0; i++) {
        await new Promise((r) => setTimeout(r, 10));
        globalThis.gc();
      }
      let refused = 'ok';
      try { compileValidator('second', { type: 'nope' }); } catch (error) { refused = error.message; }
      console.log(JSON.stringify({ loaded, collected, refused }));
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--input-type=module', '-e', script],
      { timeout: 30_000 },
    );
    const result = JSON.parse(stdout) as { loaded: number; collected: number; refused: string };
    expect({ loaded: result.loaded, collected: result.collected }).toEqual({ loaded: 2, collected: 1 });
    expect(result.refused).toBe(outcome(compileValidator, { type: 'nope' }).replace('<payload>', '<second>'));
  });
});
