import { defineTool } from 'organism';
import { pause } from '../lib/client.ts';

const noArgs = { type: 'object', properties: {}, additionalProperties: false } as const;
const common = { args: noArgs, readOnly: true, capability: 'read', source: 'native' } as const;

/**
 * Telling the calling client while a tool runs: ctx.client.log (notifications/message, at or
 * above the level the client set) and ctx.client.progress (notifications/progress, when the
 * call carried a progress token). Called from elsewhere, the tool runs the same and tells no one.
 */
export default [
  defineTool({
    ...common,
    name: 'test_tool_with_logging',
    description:
      'Sends three info log messages 50 ms apart while it runs (conformance: tools-call-with-logging).',
    run: async (_args, ctx) => {
      ctx.client?.log('info', 'Tool execution started');
      await pause(50, ctx.signal);
      ctx.client?.log('info', 'Tool processing data');
      await pause(50, ctx.signal);
      ctx.client?.log('info', 'Tool execution completed');
      return 'Tool with logging executed successfully';
    },
  }),
  defineTool({
    ...common,
    name: 'test_tool_with_progress',
    description:
      'Reports progress 0, 50 and 100 of 100, 50 ms apart (conformance: tools-call-with-progress).',
    run: async (_args, ctx) => {
      ctx.client?.progress(0, 100);
      await pause(50, ctx.signal);
      ctx.client?.progress(50, 100);
      await pause(50, ctx.signal);
      ctx.client?.progress(100, 100);
      return 'Tool with progress executed successfully';
    },
  }),
  defineTool({
    ...common,
    name: 'test_reconnection',
    description:
      'Runs for 1.5 s, longer than mcp.stream_close_ms, so its SSE stream is closed mid-call and the client resumes it (conformance: server-sse-polling).',
    run: async (_args, ctx) => {
      await pause(1500, ctx.signal);
      return 'Reconnection test completed';
    },
  }),
];
