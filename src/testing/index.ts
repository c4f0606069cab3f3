/**
 * organism/testing: what a listener author needs to test their listeners and agents, the same kit
 * Organism's own tests use. `import { testListener, until } from 'organism/testing'`.
 *
 *   testListener(definition | module path, { peers, tools })  one listener on a real in-process bus;
 *     tools by name ('key_value_set', 'webhook'...) or as ToolDefinitions, `approval` a policy
 *   testAgent({ name, model: script, tools, peers })           an agent with its model scripted
 *   testConfig({ ...partial organism.yaml })                   a config with the schema's defaults
 *   until(probe, { what, timeoutMs })                          waits for an outcome, never a fixed sleep
 *   createScriptedProvider({ script })                         the scripted stand-in for a model
 */

export {
  createScriptedProvider,
  type Script,
  type ScriptEntry,
  type ScriptTurn,
} from '../agent/providers/scripted.ts';
export type {
  CompletionRequest,
  CompletionTurn,
  Provider,
} from '../agent/types.ts';
export { TestKitError, WaitTimeoutError } from '../errors.ts';
export type { Approval } from '../tools/approval/types.ts';
export { type TestAgentOptions, type TestedAgent, testAgent } from './agent.ts';
export {
  type ApprovalAnswer,
  type ApprovalPolicy,
  type ApprovalRequest,
  NO_POLICY,
  POLICY_DECIDER,
} from './approval.ts';
export {
  BUILTIN_TOOLS,
  type BuiltinToolName,
  LIVE_TOOLS,
  type LiveToolName,
  type TestTool,
  type ToolFake,
  type ToolFakes,
} from './builtins.ts';
export { type DeepPartial, type TestConfigInput, type TestConfigOptions, testConfig } from './config.ts';
export {
  type LogLine,
  type Replies,
  type Reply,
  type SendOptions,
  TEST_SENDER,
  type TestedListener,
  type TestListenerOptions,
  testListener,
} from './listener.ts';
export type {
  EmailRecorder,
  RecordedEmail,
  RecordedWebhook,
  WebhookAnswer,
  WebhookRecorder,
  WebhookResponder,
} from './recorders.ts';
export type { TestKv, TestLibrarian } from './stores.ts';
export { type NotYet, type UntilOptions, until } from './until.ts';
