import { defineTool } from 'organism';

/**
 * An input schema in JSON Schema 2020-12 with `$schema`, `$defs`, a `$ref` and
 * `additionalProperties: false` (conformance: json-schema-2020-12, SEP-1613): tools/list gives it
 * as written, and the dispatcher checks arguments against it.
 */
export default defineTool({
  name: 'json_schema_2020_12_tool',
  description:
    'Takes a name and an address, with a JSON Schema 2020-12 input schema (conformance: json-schema-2020-12).',
  args: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: {
      address: {
        type: 'object',
        properties: { street: { type: 'string' }, city: { type: 'string' } },
      },
    },
    properties: {
      name: { type: 'string' },
      address: { $ref: '#/$defs/address' },
    },
    additionalProperties: false,
  },
  readOnly: true,
  capability: 'read',
  source: 'native',
  run: async (args) => `Received: ${JSON.stringify(args)}`,
});
