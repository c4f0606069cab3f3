/**
 * The validated, defaults-applied shape of organism.yaml. organism.schema.json is the source of
 * truth for keys, defaults and descriptions; this type mirrors it (test/config/schema-types.test.ts
 * keeps the two in step). snake_case as in the file.
 */
/** Per-listener, per-tool settings from organism.yaml `tool_config`. Keys beyond these are tool-specific. */
export interface ToolConfig {
  rate_limit?: { per_minute: number; burst?: number };
  timeout_ms?: number;
  max_result_bytes?: number;
  [key: string]: unknown;
}

export type TrustLevel = 'low' | 'medium' | 'high';

export interface OrganismSection {
  name: string;
  description?: string;
  /** Where history, audit, the embedded kv store and librarian live. Resolved to an absolute path. */
  data_dir: string;
  /** Root for file tools and run_command. Resolved to an absolute path. */
  workspace: string;
  log_level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
}

export interface ServerSection {
  host: string;
  port: number;
}

export interface LimitsSection {
  max_message_bytes: number;
  max_xml_depth: number;
  max_attributes: number;
  max_text_length: number;
  max_thread_hops: number;
  max_call_depth: number;
  handler_timeout_ms: number;
  max_history_per_thread: number;
  thread_idle_ms: number;
}

export interface BusSection {
  transport: 'memory' | 'redis';
  url?: string;
  group?: string;
  queue_length: number;
  max_concurrent: number;
  drain_timeout_ms: number;
}

export interface ListenerConfig {
  name: string;
  description: string;
  /** Module path, resolved to absolute against the config file's folder. Absent for agents. */
  handler?: string;
  /** Root tag override; defaults to the module's payload.tag. */
  payload?: string;
  agent: boolean;
  peers: string[];
  broadcast: boolean;
  tools: string[];
  tool_config: Record<string, ToolConfig>;
  trust: TrustLevel;
  max_concurrent?: number;
  queue_length?: number;
  timeout_ms?: number;
  /** Agent-only keys (issue 6) pass through here. */
  prompt?: string;
  max_turns?: number;
  budget?: { tokens?: number };
}

export interface OrganismConfig {
  /** Absolute path of the file this was loaded from. */
  file: string;
  organism: OrganismSection;
  server: ServerSection;
  limits: LimitsSection;
  bus: BusSection;
  listeners: ListenerConfig[];
  /** Sections owned by later parts (tools, llm, kv, smtp, librarian, web_search, auth) keep their raw validated shape here. */
  [section: string]: unknown;
}
