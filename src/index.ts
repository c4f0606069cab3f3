/**
 * The public surface for listener authors: `import { defineListener } from 'organism'`.
 * Nothing else in src/ is API.
 */

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
export { defineListener } from './listener/types.ts';
export type { Capability, ToolCaller, ToolDefinition, ToolResult, ToolRunContext } from './tools/types.ts';
