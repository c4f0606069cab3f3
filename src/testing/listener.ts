/**
 * testListener(): one listener on a real in-process bus, for its author's tests. The message goes
 * the whole way a daemon would take it (parse, route, validate, schedule, handle, wrap), tools go
 * through the real dispatcher and guard, and what comes back is what a caller would read. Only
 * the listener's neighbours are stand-ins the test provides.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { AuditEntry } from '../audit/record.ts';
import { Bus } from '../bus/bus.ts';
import type { ListenerSpec } from '../bus/listeners.ts';
import type { MessageKind, MessageView } from '../bus/message.ts';
import { MemoryTransport } from '../bus/transport/memory.ts';
import type { ListenerConfig, OrganismConfig } from '../config/types.ts';
import { WaitTimeoutError } from '../errors.ts';
import { loadListenerModule } from '../listener/loader.ts';
import type { AnyListenerDefinition, ListenerDefinition } from '../listener/types.ts';
import type { Approval } from '../tools/approval/types.ts';
import { ToolRegistry } from '../tools/registry.ts';
import { decodePayload, encodePayload } from '../xml/codec.ts';
import { parsePayload } from '../xml/parse.ts';
import { type ApprovalPolicy, checkPolicy } from './approval.ts';
import { type LiveToolName, resolveTools, type TestTool, type ToolFakes } from './builtins.ts';
import { type DeepPartial, type TestConfigInput, testConfig } from './config.ts';
import type { EmailRecorder, WebhookRecorder } from './recorders.ts';
import type { TestKv, TestLibrarian } from './stores.ts';
import { kitTools } from './tool-runtime.ts';

/** The name the test's messages come from; replies are the messages addressed back to it. */
export const TEST_SENDER = 'test';

export interface TestListenerOptions {
  /** The listener's name in the organism. Default: the name its module gives (defineListener's `name`), else its payload tag. */
  name?: string;
  /** Its organism.yaml entry beyond name and handler (trust, timeout_ms, tool_config...). */
  config?: DeepPartial<ListenerConfig>;
  /**
   * Stand-ins for the listeners it may address, by name: they receive what it sends and their
   * replies reach its onReply. Each becomes one of its peers.
   */
  peers?: Record<string, AnyListenerDefinition>;
  /**
   * Tools granted to it, run through the real dispatcher and guard: Organism's built-in tools by
   * name (`'key_value_set'`, `'webhook'`...), your own ToolDefinitions, or fakes (a ToolDefinition
   * with a built-in's name). Their tool_config is `config.tool_config`, as in organism.yaml.
   */
  tools?: TestTool[];
  /**
   * Decides the calls whose tool_config asks for approval, in a person's place: `'approve'`,
   * `'deny'`, or a function of the request (as `organism approvals list` shows it) returning true,
   * false or `{ approve, reason }`. Default: such calls are denied, saying how to set a policy.
   */
  approval?: ApprovalPolicy;
  /**
   * Built-ins named in `tools` whose run the test gives: the built-in's arguments, tool_config and
   * guard, the test's result. run_command, fetch_url and web_search need a fake or `live`.
   */
  fakes?: ToolFakes;
  /**
   * Built-ins that run as in production: webhook and send_email send for real instead of being
   * recorded, run_command runs in the sandbox, fetch_url and web_search reach the network.
   */
  live?: LiveToolName[];
  /** The rest of organism.yaml (limits, bus...), schema defaults applied (see testConfig). */
  organism?: TestConfigInput;
  /** How long send() waits for the thread to settle, ms. Default 10 000. */
  timeoutMs?: number;
}

/** One message that came back to the test. */
export interface Reply {
  from: string;
  /** response (respond()), huh (the input did not parse, validate or route), system-error. */
  kind: MessageKind;
  /** Root tag of the payload. */
  tag: string;
  /** The payload as XML text. */
  xml: string;
  /** The payload decoded: by the listener's response schema for its response tag, else generically. */
  payload: Record<string, unknown>;
}

/** What send() resolves with: the replies, plus the thread they belong to and all its messages. */
export type Replies = Reply[] & {
  thread: string;
  /** Every message of the thread in order: what the listener sent its peers and tools too. */
  messages: readonly MessageView[];
};

export interface SendOptions {
  /** Continue this thread (from an earlier send's `replies.thread`); default a new thread. */
  thread?: string;
}

/** One line a listener (ctx.log) or the runtime logged while the test ran. */
export interface LogLine {
  level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
  msg: string;
  /** The listener that logged it (absent for the runtime's own lines). */
  listener?: string;
  thread?: string;
  /** The fields given with the message. */
  fields: Record<string, unknown>;
}

export interface TestedListener {
  readonly name: string;
  /** Everything logged so far, debug and up, in order (what the daemon would write as JSON lines). */
  readonly logs: readonly LogLine[];
  /** The organism config it runs under (schema defaults applied). */
  readonly config: OrganismConfig;
  /**
   * Sends a payload to the listener and resolves when its thread has nothing left to do, with the
   * replies to it (what came back to the test after this send). XML text goes as is; an object is
   * encoded under the listener's tag.
   */
  send(payload: string | Record<string, unknown>, options?: SendOptions): Promise<Replies>;
  /** Every message of a thread so far. */
  messages(thread: string): readonly MessageView[];
  /** The key/value store of the key_value_* tools (in the test's temp folder): fill it, read it. */
  readonly kv: TestKv;
  /** The librarian of the librarian_* tools (embedded, in the test's temp folder). */
  readonly librarian: TestLibrarian;
  /** Every webhook delivery, recorded instead of sent; `webhooks.respond()` sets the receiver's answer. */
  readonly webhooks: WebhookRecorder;
  /** Every e-mail send_email sent, recorded instead of sent. */
  readonly emails: EmailRecorder;
  /** The approval decisions made so far, in order: the request, the decision, by whom and why. */
  readonly approvals: readonly Approval[];
  /** The audit records of the tool calls and decisions, in order (what the daemon's audit log would hold). */
  readonly audit: readonly AuditEntry[];
  /**
   * Stops the bus (waiting up to 1 s for work in flight), closes what the tools opened and removes
   * the test's temp folder.
   */
  close(): Promise<void>;
}

/**
 * Runs one listener, given as its definition or its module's path (a string is resolved against
 * the working directory; a file: URL such as `new URL('../listeners/x.ts', import.meta.url)` works
 * too), with stand-in peers and the tools it is granted.
 */
export async function testListener(
  listener: AnyListenerDefinition | string | URL,
  options: TestListenerOptions = {},
): Promise<TestedListener> {
  const definition =
    typeof listener === 'string' || listener instanceof URL
      ? await loadListenerModule(typeof listener === 'string' ? resolve(listener) : fileURLToPath(listener))
      : listener;
  const name = options.name ?? definition.name ?? definition.payload.tag;
  return startHarness(
    { name, description: definition.description ?? `${name} (under test)` },
    () => definition,
    options,
  );
}

/** What the listener under test is built from, once its config and tools exist. */
export interface HarnessParts {
  config: OrganismConfig;
  /** Its own organism.yaml entry, defaults applied. */
  entry: ListenerConfig;
  registry: ToolRegistry;
  peers: ReadonlyMap<string, ListenerDefinition<any>>;
  /** The thread's messages so far (the bus's history), for agents. */
  history: (thread: string) => readonly MessageView[] | undefined;
}

/**
 * The bus around one listener: its config (schema defaults applied), the stand-in peers, the
 * granted tools behind the real dispatcher. `build` makes its definition once these exist.
 */
export async function startHarness(
  own: DeepPartial<ListenerConfig> & { name: string },
  build: (parts: HarnessParts) => ListenerDefinition<any>,
  options: TestListenerOptions,
): Promise<TestedListener> {
  const { name } = own;
  const peers = new Map(Object.entries(options.peers ?? {}));
  const policy = checkPolicy(options.approval);
  const live = options.live ?? [];
  const tools = await resolveTools(options.tools ?? [], live, options.fakes);
  // The organism's folder: data dir, workspace and stores, removed by close().
  const dir = await mkdtemp(join(tmpdir(), 'organism-test-'));
  const removeDir = () => rm(dir, { recursive: true, force: true });
  let kit: Awaited<ReturnType<typeof kitTools>> | undefined;
  let started: ReturnType<typeof startBus>;
  try {
    const config = harnessConfig(own, options, peers, tools, dir);
    const registry = new ToolRegistry();
    for (const tool of tools) registry.register(tool);
    kit = await kitTools({ config, registry, dispatch: tools.length > 0, policy, live, listener: name });
    started = startBus(config, registry, peers, kit, build);
  } catch (error) {
    // A start that fails leaves nothing open and no folder behind.
    await kit?.close().catch(() => {});
    await removeDir();
    throw error;
  }
  const { config, definition, ownTag, logs, running, kit: side } = started;
  const timeoutMs = options.timeoutMs ?? 10_000;
  return {
    name,
    config,
    logs,
    kv: side.kv,
    librarian: side.librarian,
    webhooks: side.webhooks,
    emails: side.emails,
    approvals: side.approvals,
    audit: side.audit,
    async send(payload, sendOptions = {}) {
      const text =
        typeof payload === 'string' ? payload : encodePayload(ownTag, payload, definition.payload.schema);
      const { thread, message } = await running.inject({
        to: name,
        payload: text,
        from: TEST_SENDER,
        ...(sendOptions.thread ? { thread: sendOptions.thread } : {}),
      });
      const messages = await settled(running, thread, timeoutMs);
      // The replies to this send: what came back after it (a continued thread holds earlier ones).
      const since = messages.findIndex((m) => m.id === message) + 1;
      const replies = messages
        .slice(since)
        .filter((m) => m.to === TEST_SENDER)
        .map((m) => toReply(m, definition, config));
      return Object.assign(replies, { thread, messages });
    },
    messages: (thread) => running.thread(thread)?.messages ?? [],
    async close() {
      try {
        await running.stop(1_000);
        await side.close();
      } finally {
        await removeDir();
      }
    },
  };
}

/** The bus with the listener under test (built by `build` once its tools exist) and its peers, started. */
function startBus(
  config: OrganismConfig,
  registry: ToolRegistry,
  peers: ReadonlyMap<string, ListenerDefinition<any>>,
  kit: Awaited<ReturnType<typeof kitTools>>,
  build: (parts: HarnessParts) => ListenerDefinition<any>,
) {
  let bus: Bus | undefined;
  const definition = build({
    config,
    entry: config.listeners[0]!,
    registry,
    peers,
    history: (thread) => bus?.thread(thread)?.messages,
  });
  const definitions = [definition, ...peers.values()];
  const specs: ListenerSpec[] = config.listeners.map((c, i) => ({
    config: c,
    definition: definitions[i]!,
    tag: c.payload ?? definitions[i]!.payload.tag,
  }));
  const logs: LogLine[] = [];
  const running = new Bus(specs, new MemoryTransport(), {
    limits: config.limits,
    bus: config.bus,
    logger: pino(
      { level: 'debug', base: null, timestamp: false },
      { write: (line) => logs.push(logLine(line)) },
    ),
    ...(kit.dispatcher ? { tools: kit.dispatcher } : {}),
  });
  bus = running;
  running.start();
  return { config, definition, ownTag: specs[0]!.tag, logs, running, kit };
}

/**
 * organism.yaml of the harness: the listener under test first (its tools granted), then the
 * stand-in peers. send_email named without an smtp section gets one for its recorder (nothing is
 * sent), so it is available as in an organism that has one.
 */
function harnessConfig(
  own: DeepPartial<ListenerConfig> & { name: string },
  options: TestListenerOptions,
  peers: ReadonlyMap<string, ListenerDefinition<any>>,
  tools: readonly { name: string }[],
  dir: string,
): OrganismConfig {
  const recordsMail =
    options.tools?.includes('send_email') === true &&
    !options.live?.includes('send_email') &&
    options.organism?.smtp === undefined;
  return testConfig(
    {
      ...options.organism,
      ...(recordsMail ? { smtp: { host: RECORDER_SMTP_HOST, from: RECORDER_SMTP_FROM } } : {}),
      listeners: [
        {
          ...options.config,
          ...own,
          peers: [...(options.config?.peers ?? []), ...peers.keys()],
          tools: [...(options.config?.tools ?? []), ...tools.map((t) => t.name)],
        },
        ...[...peers].map(([peer, d]) => ({
          name: peer,
          description: d.description ?? `${peer} (stand-in)`,
        })),
      ],
    },
    { dir },
  );
}

/** The smtp section send_email gets for its recorder when the test gives none. */
export const RECORDER_SMTP_HOST = 'smtp.recorder.invalid';
export const RECORDER_SMTP_FROM = 'organism@example.com';

/** Resolves with the thread's messages once nothing is queued or running in it. */
export function settled(bus: Bus, thread: string, timeoutMs = 10_000): Promise<MessageView[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unwatch();
      reject(new WaitTimeoutError(`thread ${thread} to settle`, timeoutMs));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      unwatch();
      resolve(bus.thread(thread)?.messages ?? []);
    };
    const unwatch = bus.watch(thread, { onMessage: () => {}, onIdle: finish });
    if (bus.thread(thread)?.status !== 'active') finish();
  });
}

const LEVELS: Record<number, LogLine['level']> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

function logLine(json: string): LogLine {
  const { level, msg, listener, thread, ...fields } = JSON.parse(json) as Record<string, unknown>;
  return {
    level: LEVELS[level as number] ?? 'info',
    msg: typeof msg === 'string' ? msg : '',
    ...(typeof listener === 'string' ? { listener } : {}),
    ...(typeof thread === 'string' ? { thread } : {}),
    fields,
  };
}

function toReply(m: MessageView, definition: ListenerDefinition<any>, config: OrganismConfig): Reply {
  const parsed = parsePayload(m.payload, {
    maxBytes: config.limits.max_message_bytes,
    maxDepth: config.limits.max_xml_depth,
    maxAttributes: config.limits.max_attributes,
    maxTextLength: config.limits.max_text_length,
    maxElements: config.limits.max_xml_elements,
  });
  const schema =
    m.kind === 'response' && definition.response?.tag === parsed.tag ? definition.response.schema : {};
  return {
    from: m.from,
    kind: m.kind,
    tag: parsed.tag,
    xml: parsed.xml,
    payload: decodePayload(parsed.node, schema),
  };
}
