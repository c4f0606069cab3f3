/**
 * Organism's own tools compile their argument schemas on first call rather than at registration
 * (src/tools/registry.ts): this is where a mistake in one of their schemas is caught instead. Every
 * args and config schema of every tool in tools/ and librarian/tools/ compiles under the tools'
 * strict ajv, and a lazily compiled validator refuses and explains bad arguments as an eager one does.
 */
import { describe, expect, it } from 'vitest';
import { loadToolCatalog } from '../../src/tools/catalog.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { compileSchema } from '../../src/tools/schema.ts';
import type { JsonSchema } from '../../src/xml/json-schema.ts';

const catalog = await loadToolCatalog();

describe("Organism's own tools", () => {
  it('are found', () => {
    expect(catalog.map((entry) => entry.definition.name)).toContain('calculate');
  });

  for (const { definition, module } of catalog) {
    it(`${definition.name}: its args and config schemas compile (${module.split('/').slice(-2).join('/')})`, () => {
      expect(() => compileSchema(definition.args as JsonSchema)).not.toThrow();
      if (definition.config !== undefined) expect(() => compileSchema(definition.config!)).not.toThrow();
    });
  }

  it('a validator compiled on first call refuses bad arguments with the same errors as one compiled at once', () => {
    const calculate = catalog.find((entry) => entry.definition.name === 'calculate')!;
    const own = new ToolRegistry().register(calculate.definition, { module: calculate.module });
    const eager = compileSchema(calculate.definition.args as JsonSchema);
    for (const args of [{}, { expression: 42 }, { expression: '1 + 1' }]) {
      expect(own.validateArgs(args)).toBe(eager(args));
      expect(own.validateArgs.errors ?? null).toEqual(eager.errors ?? null);
    }
    expect(own.validateArgs({})).toBe(false);
  });
});
