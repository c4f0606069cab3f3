import { defineTool, OrganismError } from 'organism';

/**
 * A tool that fails (conformance: tools-call-error): what it throws becomes the call's error
 * result, `isError: true` with the message, and the daemon goes on.
 */
export default defineTool({
  name: 'test_error_handling',
  description: 'Always fails, to show how a failing tool is reported (conformance: tools-call-error).',
  args: { type: 'object', properties: {}, additionalProperties: false },
  readOnly: true,
  capability: 'read',
  source: 'native',
  run: async () => {
    throw new OrganismError(
      'conformance.intentional',
      'This tool intentionally returns an error for testing',
    );
  },
});
