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
  /** Whether a person approves each call first (README "Approval"). */
  approval?: 'never' | 'destructive' | 'always';
  approval_timeout_ms?: number;
  approval_role?: 'operator' | 'admin';
  approval_max_pending?: number;
  /** Also ask the MCP client's user whose call started the thread (elicitation). */
  approval_elicitation?: boolean;
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
  /** The workspace's size bound in bytes (a loop-mounted ext4 image of that size); 0 = none. */
  workspace_max_bytes: number;
  /** What V8 favours (src/daemon/v8-flags.ts): memory (the default) or speed. */
  optimize_for: 'memory' | 'speed';
  log_level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
}

export interface ServerSection {
  host: string;
  port: number;
  /** Injections per second per token (or client address); 0 = no limit. */
  inject_per_second: number;
  inject_burst: number;
  /** Serve the dashboard at `/` (default true). */
  dashboard: boolean;
}

export interface LimitsSection {
  max_message_bytes: number;
  max_xml_depth: number;
  /** Elements in one message (payload; the envelope's own are extra). */
  max_xml_elements: number;
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
  /** Consumer group; defaults to organism.name. */
  group: string;
  queue_length: number;
  max_concurrent: number;
  drain_timeout_ms: number;
  /** redis transport: deliveries without an ack before a message is dead-lettered. */
  max_deliveries: number;
  /** redis transport: how often held messages are marked alive, ms; the failover time follows from it. */
  heartbeat_ms: number;
  /** redis transport: parts each listener's stream and the thread state are split in (default 1). */
  partitions: number;
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
  max_turns: number;
  budget?: { tokens?: number };
  /** Agents: model settings over the organism-wide `llm:` section. */
  llm?: AgentLlmConfig;
  /** Offered to MCP clients as a tool (src/mcp/server). */
  mcp: boolean;
}

/** `tools:` section (issue 3). Paths resolved to absolute. */
export interface ToolsSection {
  revocations_file: string;
  manifest: string;
  public_key_env?: string;
}

/** `audit:` section. Paths resolved to absolute (`~/` expanded in key_file). */
export interface AuditSection {
  path: string;
  /** Environment variable holding the audit key(s); wins over key_file when set. */
  key_env: string;
  /** Key file outside data_dir; unset: $XDG_CONFIG_HOME/organism/audit.key (~/.config/...). */
  key_file?: string;
  /** Checkpoint folder outside data_dir; unset: checkpoints/ beside the key file. */
  checkpoint_dir?: string;
  checkpoint_every: number;
  checkpoint_interval_ms: number;
  on_change: 'refuse' | 'warn';
}

/** `kv:` section; no url means the embedded store on disk. */
export interface KvSection {
  url?: string;
}

/** `smtp:` section; absent means send_email is unavailable. */
export interface SmtpSection {
  host: string;
  port: number;
  secure: boolean;
  user?: string;
  password_env?: string;
  from: string;
}

/** `web_search:` section; absent means web_search is unavailable. */
export interface WebSearchSection {
  provider: 'searxng' | 'brave';
  url?: string;
  api_key_env?: string;
  timeout_ms: number;
}

export interface LibrarianSection {
  backend: 'embedded' | 'exist' | 'basex';
  url?: string;
  user?: string;
  password_env?: string;
  default_collection: string;
}

export interface LlmBackendConfig {
  /** What agents call it by (`listeners[].llm.backend`); unset, the provider's name. */
  name?: string;
  provider: 'anthropic' | 'openai' | 'ollama' | 'openai-compatible' | 'scripted' | 'mcp-sampling';
  api_key_env?: string;
  model?: string;
  base_url?: string;
  /** Environment variable holding the base URL; the backend is skipped while it is unset. */
  base_url_env?: string;
  rate_limit_tpm?: number;
  /** Resolved to an absolute path. */
  script?: string;
}

/** Settings sent with each model call; unset ones are left to the provider (max_tokens: 4096). */
export interface LlmCallSettings {
  temperature?: number;
  top_p?: number;
  /** Most tokens of one reply. */
  max_tokens?: number;
}

export interface LlmSection extends LlmCallSettings {
  strategy: 'failover' | 'round-robin';
  retries: number;
  /** Empty means the built-in scripted provider. */
  backends: LlmBackendConfig[];
}

/**
 * `listeners[].llm`: an agent's own model settings, each over the organism-wide `llm:` one. No
 * defaults of its own: an unset key is the organism-wide value.
 */
export interface AgentLlmConfig extends LlmCallSettings {
  /** The one backend asked, by its name in `llm.backends` (its `name`, else its provider); unset: all. */
  backend?: string;
  /** Sent instead of each chosen backend's model (the scripted provider shows it as its name). */
  model?: string;
  /** The scripted provider's script for this agent; resolved to an absolute path. */
  script?: string;
  strategy?: LlmSection['strategy'];
  retries?: number;
}

export interface AuthTokenConfig {
  name: string;
  role: 'viewer' | 'operator' | 'admin';
  /** Exactly one of token_env / sha256 is set (checked by the loader). */
  token_env?: string;
  sha256?: string;
}

export interface AuthSection {
  /** Empty means no authentication. */
  tokens: AuthTokenConfig[];
}

/** `history:` section: thread history kept in memory and on disk. */
export interface HistorySection {
  max_threads: number;
  /** Bytes on disk in <data_dir>/history; 0 = memory only. */
  max_bytes: number;
}

/** `telemetry:` section: OpenTelemetry traces (src/telemetry); absent means nothing of it is loaded. */
export interface TelemetrySection {
  otlp: {
    /** Base URL of the OTLP/HTTP collector (`http://127.0.0.1:4318`); `/v1/traces` is added. */
    endpoint: string;
    /** Environment variable holding extra headers, `name=value,name2=value2` (URL-encoded values). */
    headers_env?: string;
    timeout_ms: number;
  };
  service_name: string;
  sample_ratio: number;
  capture_content: boolean;
  max_queue_size: number;
  max_export_batch_size: number;
  export_delay_ms: number;
}

/** `durability:` section: the bus journal of the memory transport (src/bus/journal). */
export interface DurabilitySection {
  /** always: an fsync per 202; batch: group commit, one fsync per group (default); off: no fsync. */
  fsync: 'always' | 'batch' | 'off';
}

/** One entry of `mcp_servers:` (src/mcp/config.ts applies the defaults). */
export interface McpServerSection {
  name: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  workspace?: string;
  sandbox?: 'bubblewrap' | 'none';
  network?: boolean;
  max_memory_mb?: number;
  max_processes?: number;
  url?: string;
  token_env?: string;
  headers?: Record<string, string>;
  timeout_ms?: number;
  startup_timeout_ms?: number;
  include?: string[];
  exclude?: string[];
  start?: 'daemon' | 'lazy';
  capabilities?: Record<string, string>;
  guards?: Record<string, string>;
  restart_initial_ms?: number;
  restart_max_ms?: number;
  elicitation?: 'defaults' | 'decline';
  auth?: McpServerAuthSection;
}

/** `mcp_servers[].auth`: OAuth for a Streamable HTTP server (src/mcp/client/oauth). */
export interface McpServerAuthSection {
  grant?: 'authorization_code' | 'client_credentials';
  client_id?: string;
  client_secret_env?: string;
  client_auth?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';
  private_key_file?: string;
  jwt_algorithm?: string;
  scope?: string;
  issuer?: string;
  client_metadata_url?: string;
  client_name?: string;
  redirect_port?: number;
}

/** `mcp:` section: the identity MCP clients act as (src/mcp/server). */
export interface McpSection {
  tools: string[];
  tool_config: Record<string, ToolConfig>;
  trust: TrustLevel;
  call_timeout_ms: number;
}

export interface OrganismConfig {
  /** Absolute path of the file this was loaded from. */
  file: string;
  organism: OrganismSection;
  server: ServerSection;
  limits: LimitsSection;
  bus: BusSection;
  listeners: ListenerConfig[];
  /** The user's tool modules (folders or files), absolute; added to the built-in tools. */
  tool_modules: string[];
  /** The user's MCP prompt modules (definePrompt), absolute. */
  prompt_modules: string[];
  /** The user's MCP resource modules (defineResource), absolute. */
  resource_modules: string[];
  tools: ToolsSection;
  audit: AuditSection;
  kv: KvSection;
  smtp?: SmtpSection;
  web_search?: WebSearchSection;
  librarian: LibrarianSection;
  llm: LlmSection;
  auth: AuthSection;
  history: HistorySection;
  durability: DurabilitySection;
  telemetry?: TelemetrySection;
  /** MCP servers whose tools are tools of this organism. */
  mcp_servers: McpServerSection[];
  /** The organism served over MCP; absent: no native tools offered. */
  mcp?: McpSection;
  /** Any section added to the schema later and not yet typed here keeps its validated shape. */
  [section: string]: unknown;
}
