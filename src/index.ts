/**
 * The public surface for listener authors: `import { defineListener } from 'organism'`.
 * Nothing else in src/ is API.
 */

export type {
  CalculationErrorCode,
  CommandErrorCode,
  ConfigIssue,
  ErrorDetails,
  FileToolErrorCode,
  KvErrorCode,
  LibrarianErrorCode,
  LlmErrorCode,
  MailErrorCode,
  NetworkErrorCode,
  TransportErrorCode,
  XmlErrorCode,
} from './errors.ts';
/** Every error the runtime raises, each with a dotted `code`; a tool or listener may throw or extend them. */
export {
  AgentConfigError,
  AuditError,
  AuthError,
  BudgetError,
  BusyError,
  CalculationError,
  CommandError,
  ConfigError,
  FileToolError,
  HandlerTimeoutError,
  HistoryError,
  IntegrityError,
  JournalError,
  KvError,
  LibrarianError,
  ListenerLoadError,
  LlmError,
  MailError,
  NetworkError,
  OrganismError,
  PayloadValidationError,
  ReloadError,
  RevocationError,
  RoutingError,
  SandboxError,
  SchemaError,
  SchemaFormError,
  SearchError,
  ServerError,
  ShellParseError,
  ShuttingDownError,
  ThreadNotFoundError,
  ToolRegistrationError,
  TransportError,
  UsageError,
  XmlError,
} from './errors.ts';
export type {
  ListenerTypes,
  OrganismTypes,
  ToolArgsOf,
  ToolResultOf,
  ToolTypes,
} from './listener/organism-types.ts';
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
export {
  type Completer,
  definePrompt,
  defineResource,
  type PromptArgument,
  type PromptDefinition,
  type PromptMessage,
  type ResourceDefinition,
  type ResourcePart,
  type ResourceValue,
} from './mcp/server/features/define.ts';
export type { AnySchema, Infer } from './schema/infer.ts';
export { type JsonSchemaAdapter, registerJsonSchemaAdapter } from './schema/json-form.ts';
export type { StandardSchemaV1 } from './schema/standard.ts';
export {
  type AudioBlock,
  audioContent,
  type ContentBlock,
  type ImageBlock,
  imageContent,
  type ResourceBlock,
  type ResourceLinkBlock,
  resourceContent,
  resourceLinkContent,
  type TextBlock,
  type ToolContent,
  textContent,
  toolContent,
} from './tools/content.ts';
export { defineTool, type ToolInput } from './tools/define.ts';
export type { Capability, ToolCaller, ToolDefinition, ToolResult, ToolRunContext } from './tools/types.ts';
