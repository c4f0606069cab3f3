/**
 * The compiled package checks a listener's payload schema against draft 2020-12 with the
 * meta-schema validator `npm run build` precompiled (bin/precompile-validators.js) instead of
 * letting ajv compile the meta-schema at start. A schema must be refused or accepted exactly as
 * ajv's own check does, with the same message; a schema naming another `$schema` is left to ajv.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
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
});
