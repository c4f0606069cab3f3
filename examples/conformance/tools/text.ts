import { defineTool } from 'organism';

/** tools-call-simple-text: one text block. */
export default defineTool({
  name: 'test_simple_text',
  description: 'Returns a simple text response (conformance: tools-call-simple-text).',
  args: { type: 'object', properties: {}, additionalProperties: false },
  readOnly: true,
  capability: 'read',
  source: 'native',
  run: async () => 'This is a simple text response for testing.',
});
