/**
 * The public surface for listener authors: `import { defineListener } from 'organism'`.
 * Nothing else in src/ is API.
 */
export { defineListener } from './listener/types.ts';
export type {
  HandlerContext,
  HandlerResult,
  IncomingReply,
  JsonSchema,
  ListenerDefinition,
  Outgoing,
  PayloadInput,
  PayloadSpec,
} from './listener/types.ts';
export type { ToolResult, ToolCaller, ToolDefinition, ToolRunContext, Capability } from './tools/types.ts';
