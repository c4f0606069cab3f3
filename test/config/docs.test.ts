import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { renderConfigReference } from '../../src/config/docs.ts';
import { organismSchema, WHEN_UNSET } from '../../src/config/schema.ts';
import type { JsonSchema } from '../../src/xml/json-schema.ts';

const REFERENCE = fileURLToPath(new URL('../../docs/reference/configuration.md', import.meta.url));

interface Prop {
  path: string;
  schema: JsonSchema;
  required: boolean;
}

/** Every property of the schema with its key path, through objects, lists and maps. */
function allProperties(schema: JsonSchema, prefix = ''): Prop[] {
  const out: Prop[] = [];
  const required = new Set((schema.required as string[] | undefined) ?? []);
  for (const [name, sub] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    const path = prefix ? `${prefix}.${name}` : name;
    out.push({ path, schema: sub, required: required.has(name) });
    out.push(...allProperties(sub, path));
    if (sub.type === 'array' && typeof sub.items === 'object')
      out.push(...allProperties(sub.items as JsonSchema, `${path}[]`));
    if (typeof sub.additionalProperties === 'object') {
      out.push(...allProperties(sub.additionalProperties as JsonSchema, `${path}.<name>`));
    }
  }
  return out;
}

/** Every object schema, wherever it sits. */
function allObjects(schema: JsonSchema, path = '(root)'): { path: string; schema: JsonSchema }[] {
  const out: { path: string; schema: JsonSchema }[] = [];
  if (schema.type === 'object') out.push({ path, schema });
  for (const [name, sub] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    out.push(...allObjects(sub, `${path}.${name}`));
  }
  if (typeof schema.items === 'object') out.push(...allObjects(schema.items as JsonSchema, `${path}[]`));
  if (typeof schema.additionalProperties === 'object') {
    out.push(...allObjects(schema.additionalProperties as JsonSchema, `${path}.<name>`));
  }
  return out;
}

describe('organism.schema.json and its reference', () => {
  it('docs/reference/configuration.md is exactly what the schema renders (run npx tsx src/config/update-reference.ts)', () => {
    expect(readFileSync(REFERENCE, 'utf8')).toBe(renderConfigReference(organismSchema));
  });

  it('the rendered reference names every key path', () => {
    const rendered = renderConfigReference(organismSchema);
    const paths = allProperties(organismSchema);
    expect(paths.length).toBeGreaterThan(90);
    for (const { path } of paths) {
      if (
        ![
          'organism',
          'server',
          'limits',
          'bus',
          'listeners',
          'tools',
          'audit',
          'kv',
          'smtp',
          'web_search',
          'librarian',
          'llm',
          'auth',
        ].includes(path)
      ) {
        expect(rendered, path).toContain(`\`${path.replace('.<name>', '.<tool>')}\``);
      }
    }
  });

  it('every property has a one-line description and, if optional, a default (or says what unset means)', () => {
    const missing: string[] = [];
    for (const { path, schema, required } of allProperties(organismSchema)) {
      const description = schema.description;
      if (typeof description !== 'string' || description.trim() === '' || description.includes('\n')) {
        missing.push(`${path}: description`);
      }
      if (!required && !('default' in schema) && typeof schema[WHEN_UNSET] !== 'string')
        missing.push(`${path}: default`);
    }
    expect(missing).toEqual([]);
  });

  it('every object refuses unknown keys, except the tool-specific keys of a tool_config entry', () => {
    const open = allObjects(organismSchema)
      .filter(({ schema }) => schema.additionalProperties !== false)
      .map(({ path }) => path);
    // Maps keyed by the user's names: tool_config by tool, an MCP server's env/headers/capabilities/guards.
    expect(open).toEqual([
      '(root).listeners[].tool_config',
      '(root).listeners[].tool_config.<name>',
      '(root).mcp_servers[].env',
      '(root).mcp_servers[].headers',
      '(root).mcp_servers[].capabilities',
      '(root).mcp_servers[].guards',
      '(root).mcp.tool_config',
      '(root).mcp.tool_config.<name>',
    ]);
    const toolConfig = (organismSchema.properties as any).listeners.items.properties.tool_config;
    // A native tool's name, or an MCP server's tool as <server>.<tool>.
    expect(toolConfig.propertyNames).toEqual({
      pattern: '^([a-z][a-z0-9_]*|[a-z][a-z0-9_-]{0,31}\\.[A-Za-z0-9_.-]{1,128})$',
    });
  });

  it('is draft 2020-12 and every default validates against its own property', async () => {
    expect(organismSchema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const { Ajv2020 } = await import('ajv/dist/2020.js');
    const ajv = new Ajv2020({ strict: false });
    for (const { path, schema } of allProperties(organismSchema)) {
      if (!('default' in schema) || String(schema.default).startsWith('<')) continue;
      const { default: value, ...rest } = schema;
      expect(ajv.validate(rest, value), `${path}: ${ajv.errorsText()}`).toBe(true);
    }
  });
});
