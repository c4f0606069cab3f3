/**
 * The compiled package checks Organism's own tools' tool_config (at every start, for each granted
 * tool) and arguments with validators `npm run build` precompiled (bin/precompile-validators.js).
 * Each must be the one the compiled runtime picks for that schema, and must answer as the validator
 * compiled at run time does: same verdict, same defaults filled in, same errors (so the same words
 * for the agent and in `listeners[i].tool_config...` messages). A schema not precompiled (a user's
 * tool) still compiles.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadToolCatalog } from '../../src/tools/catalog.ts';
import { newToolAjv, PRECOMPILED_TOOL_VALIDATORS, schemaKey } from '../../src/tools/schema.ts';
import { configSchema } from '../../src/tools/tool-config.ts';
import type { JsonSchema } from '../../src/xml/json-schema.ts';

const DIST_TOOLS = fileURLToPath(new URL('../../dist/src/tools/', import.meta.url));
type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null };

const catalog = await loadToolCatalog();
const precompiled = createRequire(import.meta.url)(`${DIST_TOOLS}${PRECOMPILED_TOOL_VALIDATORS}`) as Record<
  string,
  Validate
>;
const dist = (await import(`${DIST_TOOLS}schema.js`)) as { compileSchema(schema: JsonSchema): Validate };

/** Objects for a schema: empty, an unknown key, and each property given values of every type. */
function samples(schema: JsonSchema): unknown[] {
  const wrong: unknown[] = ['x', '', -1, 0, 2.5, 1e9, true, [], ['x'], {}, { zzz: 1 }, null];
  const out: unknown[] = [{}, { zzz: 1 }, 'x', null, []];
  const properties = Object.keys((schema.properties as object | undefined) ?? {});
  for (const key of properties) for (const bad of wrong) out.push({ [key]: bad });
  for (const bad of wrong) out.push(Object.fromEntries(properties.map((key) => [key, bad])));
  return out;
}

describe("Organism's own tools' precompiled validators", () => {
  const schemas = catalog.flatMap(({ definition }) => [
    [`${definition.name} args`, definition.args as JsonSchema] as const,
    [`${definition.name} tool_config`, configSchema(definition.config)] as const,
  ]);

  it('cover every own tool, and the compiled runtime uses them', () => {
    expect(schemas.length).toBeGreaterThan(20);
    for (const [name, schema] of schemas) {
      const validate = precompiled[schemaKey(schema)];
      expect(validate, name).toBeTypeOf('function');
      expect(dist.compileSchema(schema), name).toBe(validate);
    }
  });

  it('answer as validators compiled at run time: verdict, defaults and errors', () => {
    const ajv = newToolAjv();
    let refused = 0;
    for (const [name, schema] of schemas) {
      const runtime = ajv.compile(schema) as Validate;
      const built = precompiled[schemaKey(schema)]!;
      for (const sample of samples(schema)) {
        const a = structuredClone(sample);
        const b = structuredClone(sample);
        const verdict = runtime(a);
        expect(built(b), `${name}: ${JSON.stringify(sample)}`).toBe(verdict);
        expect(b).toEqual(a);
        expect(built.errors ?? null).toEqual(runtime.errors ?? null);
        if (!verdict) refused++;
      }
    }
    expect(refused).toBeGreaterThan(200);
  });

  it('leave other schemas to be compiled', () => {
    const validate = dist.compileSchema({
      type: 'object',
      properties: { only_here: { type: 'integer' } },
      additionalProperties: false,
    });
    expect(validate({ only_here: 1 })).toBe(true);
    expect(validate({ only_here: 'x' })).toBe(false);
    expect(Object.values(precompiled)).not.toContain(validate);
  });
});
