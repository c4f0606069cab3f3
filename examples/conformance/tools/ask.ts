import { defineTool } from 'organism';
import { mcpClient } from '../lib/client.ts';

const noArgs = { type: 'object', properties: {}, additionalProperties: false } as const;
const common = { readOnly: true, capability: 'read', source: 'native' } as const;

/** What the user answered, as the suite's elicitation fixtures say it. */
function completed(result: { action: string; content?: unknown }): string {
  return `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`;
}

/**
 * Asking the calling client: its model (ctx.client.createMessage, sampling/createMessage) and its
 * user (ctx.client.elicit, elicitation/create). A client that offers neither gets an error result.
 */
export default [
  defineTool({
    ...common,
    name: 'test_sampling',
    description: "Asks the calling client's model to answer a prompt (conformance: tools-call-sampling).",
    args: {
      type: 'object',
      properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } },
      required: ['prompt'],
      additionalProperties: false,
    },
    run: async ({ prompt }, ctx) => {
      const result = await mcpClient(ctx).createMessage(
        { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 },
        ctx.signal,
      );
      const blocks = Array.isArray(result.content) ? result.content : [result.content];
      const text = blocks.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
      return `LLM response: ${text}`;
    },
  }),
  defineTool({
    ...common,
    name: 'test_elicitation',
    description:
      "Asks the calling client's user for a username and an email (conformance: tools-call-elicitation).",
    args: {
      type: 'object',
      properties: { message: { type: 'string', description: 'The message to show the user' } },
      required: ['message'],
      additionalProperties: false,
    },
    run: async ({ message }, ctx) => {
      const result = await mcpClient(ctx).elicit(
        {
          message,
          requestedSchema: {
            type: 'object',
            properties: {
              username: { type: 'string', description: "User's response" },
              email: { type: 'string', description: "User's email address" },
            },
            required: ['username', 'email'],
          },
        },
        ctx.signal,
      );
      return `User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`;
    },
  }),
  defineTool({
    ...common,
    args: noArgs,
    name: 'test_elicitation_sep1034_defaults',
    description: 'Asks with a default for every primitive type (conformance: elicitation-sep1034-defaults).',
    run: async (_args, ctx) =>
      completed(
        await mcpClient(ctx).elicit(
          {
            message: 'Please review and update the form fields with defaults',
            requestedSchema: {
              type: 'object',
              properties: {
                name: { type: 'string', description: 'User name', default: 'John Doe' },
                age: { type: 'integer', description: 'User age', default: 30 },
                score: { type: 'number', description: 'User score', default: 95.5 },
                status: {
                  type: 'string',
                  description: 'User status',
                  enum: ['active', 'inactive', 'pending'],
                  default: 'active',
                },
                verified: { type: 'boolean', description: 'Verification status', default: true },
              },
              required: [],
            },
          },
          ctx.signal,
        ),
      ),
  }),
  defineTool({
    ...common,
    args: noArgs,
    name: 'test_elicitation_sep1330_enums',
    description: 'Asks with the five enum forms of SEP-1330 (conformance: elicitation-sep1330-enums).',
    run: async (_args, ctx) =>
      completed(
        await mcpClient(ctx).elicit(
          {
            message: 'Please select options from the enum fields',
            requestedSchema: {
              type: 'object',
              properties: {
                untitledSingle: {
                  type: 'string',
                  description: 'Select one option',
                  enum: ['option1', 'option2', 'option3'],
                },
                titledSingle: {
                  type: 'string',
                  description: 'Select one option with titles',
                  oneOf: [
                    { const: 'value1', title: 'First Option' },
                    { const: 'value2', title: 'Second Option' },
                    { const: 'value3', title: 'Third Option' },
                  ],
                },
                legacyEnum: {
                  type: 'string',
                  description: 'Select one option (legacy)',
                  enum: ['opt1', 'opt2', 'opt3'],
                  enumNames: ['Option One', 'Option Two', 'Option Three'],
                },
                untitledMulti: {
                  type: 'array',
                  description: 'Select multiple options',
                  minItems: 1,
                  maxItems: 3,
                  items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
                },
                titledMulti: {
                  type: 'array',
                  description: 'Select multiple options with titles',
                  minItems: 1,
                  maxItems: 3,
                  items: {
                    anyOf: [
                      { const: 'value1', title: 'First Choice' },
                      { const: 'value2', title: 'Second Choice' },
                      { const: 'value3', title: 'Third Choice' },
                    ],
                  },
                },
              },
              required: [],
            },
          },
          ctx.signal,
        ),
      ),
  }),
];
