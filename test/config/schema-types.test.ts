/**
 * Keeps src/config/types.ts in step with organism.schema.json. Each table below is type-checked
 * against the interface (a missing or extra key, or a wrong 'always'/'optional', fails `tsc`), and
 * the test checks the same table against the schema (a key there that the type lacks fails here).
 */
import { describe, expect, it } from 'vitest';
import { organismSchema } from '../../src/config/schema.ts';
import type {
  AgentLlmConfig,
  AuditSection,
  AuthSection,
  AuthTokenConfig,
  BusSection,
  DurabilitySection,
  HistorySection,
  KvSection,
  LibrarianSection,
  LimitsSection,
  ListenerConfig,
  LlmBackendConfig,
  LlmSection,
  OrganismConfig,
  OrganismSection,
  ServerSection,
  SmtpSection,
  ToolConfig,
  ToolsSection,
  WebSearchSection,
} from '../../src/config/types.ts';
import type { JsonSchema } from '../../src/xml/json-schema.ts';

/** Keys of T without its index signature. */
type KnownKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };
/** For each key: is it always present after loading, or optional? */
type Presence<T> = { [K in KnownKeys<T>]-?: object extends Pick<T, K> ? 'optional' : 'always' };

const organism: Presence<OrganismSection> = {
  name: 'always',
  description: 'optional',
  data_dir: 'always',
  workspace: 'always',
  workspace_max_bytes: 'always',
  optimize_for: 'always',
  log_level: 'always',
};
const server: Presence<ServerSection> = {
  host: 'always',
  port: 'always',
  inject_per_second: 'always',
  inject_burst: 'always',
  dashboard: 'always',
};
const limits: Presence<LimitsSection> = {
  max_message_bytes: 'always',
  max_xml_depth: 'always',
  max_xml_elements: 'always',
  max_attributes: 'always',
  max_text_length: 'always',
  max_thread_hops: 'always',
  max_call_depth: 'always',
  handler_timeout_ms: 'always',
  max_history_per_thread: 'always',
  thread_idle_ms: 'always',
};
const bus: Presence<BusSection> = {
  transport: 'always',
  url: 'optional',
  group: 'always',
  queue_length: 'always',
  max_concurrent: 'always',
  drain_timeout_ms: 'always',
  max_deliveries: 'always',
  heartbeat_ms: 'always',
  partitions: 'always',
};
const listener: Presence<ListenerConfig> = {
  name: 'always',
  description: 'always', // filled from the module by the loader
  handler: 'optional',
  payload: 'optional',
  agent: 'always',
  peers: 'always',
  broadcast: 'always',
  tools: 'always',
  tool_config: 'always',
  trust: 'always',
  max_concurrent: 'optional',
  queue_length: 'optional',
  timeout_ms: 'optional',
  prompt: 'optional',
  max_turns: 'always',
  budget: 'optional',
  llm: 'optional',
  mcp: 'always',
};
const agentLlm: Presence<AgentLlmConfig> = {
  backend: 'optional',
  model: 'optional',
  script: 'optional',
  temperature: 'optional',
  top_p: 'optional',
  max_tokens: 'optional',
  strategy: 'optional',
  retries: 'optional',
};
const toolConfig: Presence<ToolConfig> = {
  rate_limit: 'optional',
  timeout_ms: 'optional',
  max_result_bytes: 'optional', // ToolConfig is also built by hand in tests, so it stays optional there
  approval: 'optional', // likewise
  approval_timeout_ms: 'optional',
  approval_role: 'optional',
  approval_elicitation: 'optional',
  approval_max_pending: 'optional',
};
const tools: Presence<ToolsSection> = {
  revocations_file: 'always',
  manifest: 'always',
  public_key_env: 'optional',
};
const audit: Presence<AuditSection> = {
  path: 'always',
  key_env: 'always',
  key_file: 'optional',
  checkpoint_dir: 'optional',
  checkpoint_every: 'always',
  checkpoint_interval_ms: 'always',
  on_change: 'always',
};
const kv: Presence<KvSection> = { url: 'optional' };
const smtp: Presence<SmtpSection> = {
  host: 'always',
  port: 'always',
  secure: 'always',
  user: 'optional',
  password_env: 'optional',
  from: 'always',
};
const webSearch: Presence<WebSearchSection> = {
  provider: 'always',
  url: 'optional',
  api_key_env: 'optional',
  timeout_ms: 'always',
};
const librarian: Presence<LibrarianSection> = {
  backend: 'always',
  url: 'optional',
  user: 'optional',
  password_env: 'optional',
  default_collection: 'always',
};
const llm: Presence<LlmSection> = {
  strategy: 'always',
  retries: 'always',
  temperature: 'optional',
  top_p: 'optional',
  max_tokens: 'optional',
  backends: 'always',
};
const backend: Presence<LlmBackendConfig> = {
  name: 'optional',
  provider: 'always',
  api_key_env: 'optional',
  model: 'optional',
  base_url: 'optional',
  base_url_env: 'optional',
  rate_limit_tpm: 'optional',
  script: 'optional',
};
const auth: Presence<AuthSection> = { tokens: 'always' };
const token: Presence<AuthTokenConfig> = {
  name: 'always',
  role: 'always',
  token_env: 'optional',
  sha256: 'optional',
};
const history: Presence<HistorySection> = { max_threads: 'always', max_bytes: 'always' };
const durability: Presence<DurabilitySection> = { fsync: 'always' };
const root: Presence<Omit<OrganismConfig, 'file'>> = {
  organism: 'always',
  server: 'always',
  limits: 'always',
  bus: 'always',
  listeners: 'always',
  tool_modules: 'always',
  prompt_modules: 'always',
  resource_modules: 'always',
  tools: 'always',
  audit: 'always',
  kv: 'always',
  smtp: 'optional',
  web_search: 'optional',
  librarian: 'always',
  llm: 'always',
  auth: 'always',
  history: 'always',
  durability: 'always',
  mcp_servers: 'always',
  mcp: 'optional',
  telemetry: 'optional',
};

/** Keys the loader fills although the schema has no literal default for them. */
const FILLED_BY_LOADER = new Set(['listeners[].description']);

function at(path: string): JsonSchema {
  let here: any = organismSchema;
  for (const seg of path.split('.').filter(Boolean)) {
    if (seg.endsWith('[]')) here = here.properties[seg.slice(0, -2)].items;
    else if (seg === '<tool>') here = here.additionalProperties;
    else here = here.properties[seg];
  }
  return here;
}

const TABLES: [string, Record<string, 'always' | 'optional'>][] = [
  ['', root],
  ['organism', organism],
  ['server', server],
  ['limits', limits],
  ['bus', bus],
  ['listeners[]', listener],
  ['listeners[].llm', agentLlm],
  ['listeners[].tool_config.<tool>', toolConfig],
  ['tools', tools],
  ['audit', audit],
  ['kv', kv],
  ['smtp', smtp],
  ['web_search', webSearch],
  ['librarian', librarian],
  ['llm', llm],
  ['llm.backends[]', backend],
  ['auth', auth],
  ['auth.tokens[]', token],
  ['history', history],
  ['durability', durability],
];

describe('src/config/types.ts mirrors organism.schema.json', () => {
  it.each(TABLES)('%s has the same keys in the type and the schema', (path, table) => {
    const schema = at(path);
    expect(Object.keys(table).sort()).toEqual(Object.keys(schema.properties as object).sort());
  });

  it.each(TABLES.filter(([path]) => !path.includes('<tool>')))(
    '%s: keys always present in the type are required or defaulted in the schema',
    (path, table) => {
      const schema = at(path);
      const required = new Set((schema.required as string[] | undefined) ?? []);
      for (const [key, presence] of Object.entries(table)) {
        const sub = (schema.properties as Record<string, JsonSchema>)[key]!;
        const filled = required.has(key) || 'default' in sub || FILLED_BY_LOADER.has(`${path}.${key}`);
        expect(presence === 'always', `${path}.${key}`).toBe(filled);
      }
    },
  );
});
