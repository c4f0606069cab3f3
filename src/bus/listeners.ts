/**
 * A listener as the bus runs it: its config and module merged, limits resolved, validator compiled
 * and peer usage text generated once at start, so no hop pays for any of it.
 */
import type { BusSection, LimitsSection, ListenerConfig, TrustLevel } from '../config/types.ts';
import type {
  Handler,
  JsonSchema,
  ListenerDefinition,
  PayloadSpec,
  ReplyHandler,
} from '../listener/types.ts';
import { type PayloadCheck, standardPayloadCheck } from '../schema/check.ts';
import { schemaToPrompt } from '../xml/describe.ts';
import { compileValidator } from '../xml/validate.ts';

/** What the daemon hands the bus for each listener: its organism.yaml entry and its definition. */
export interface ListenerSpec {
  config: ListenerConfig;
  definition: ListenerDefinition<any>;
  /** Root tag it accepts (organism.yaml `payload` override, else the module's). */
  tag: string;
}

export interface RuntimeListener {
  name: string;
  description: string;
  /** Absolute path of its module (organism.yaml `handler`); undefined for an agent. */
  module: string | undefined;
  tag: string;
  /** The payload's JSON Schema (the JSON Schema form of a Standard Schema): what decodes it. */
  schema: JsonSchema;
  /** ajv for a JSON Schema, the schema's own `~standard.validate` for a Standard Schema. */
  validate: PayloadCheck;
  response: PayloadSpec | undefined;
  handler: Handler<any>;
  onReply: ReplyHandler | undefined;
  peers: ReadonlySet<string>;
  peerList: readonly string[];
  broadcast: boolean;
  agent: boolean;
  tools: readonly string[];
  trust: TrustLevel;
  maxConcurrent: number;
  queueLength: number;
  timeoutMs: number;
  /** Usage instructions for this listener's peers, for prompts (ctx.usage). */
  usage: string;
}

export function buildRuntimeListeners(
  specs: readonly ListenerSpec[],
  limits: LimitsSection,
  bus: BusSection,
): Map<string, RuntimeListener> {
  const byName = new Map<string, RuntimeListener>();
  for (const spec of specs) {
    const { config, definition, tag } = spec;
    byName.set(config.name, {
      name: config.name,
      description: config.description || definition.description || '',
      module: config.handler,
      tag,
      schema: definition.payload.schema,
      validate: definition.payload.standard
        ? standardPayloadCheck(tag, definition.payload.standard)
        : compileValidator(tag, definition.payload.schema),
      response: definition.response,
      handler: definition.handler,
      onReply: definition.onReply,
      peers: new Set(config.peers),
      peerList: Object.freeze([...config.peers]),
      broadcast: config.broadcast,
      agent: config.agent,
      tools: Object.freeze([...config.tools]),
      trust: config.trust,
      maxConcurrent: config.max_concurrent ?? bus.max_concurrent,
      queueLength: config.queue_length ?? bus.queue_length,
      timeoutMs: config.timeout_ms ?? limits.handler_timeout_ms,
      usage: '',
    });
  }
  for (const listener of byName.values()) {
    listener.usage = listener.peerList
      .map((peer) => byName.get(peer))
      .filter((peer): peer is RuntimeListener => peer !== undefined)
      .map((peer) => schemaToPrompt({ tag: peer.tag, schema: peer.schema }, peer.name, peer.description))
      .join('\n\n');
  }
  return byName;
}
