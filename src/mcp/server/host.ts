/**
 * What the organism offers MCP clients, without the SDK: listeners marked `mcp: true` as tools (a
 * call injects a payload built from the arguments by the listener's schema and waits for its reply
 * or the thread going idle), the native tools granted to the `mcp:` identity (through the
 * dispatcher, as that identity: grants, guards, limits and audit as for any listener), and threads
 * as resources `organism://threads/<id>`. Annotations say what the runtime knows of each tool.
 */
import { randomUUID } from 'node:crypto';
import type { BusApi, BusQueries } from '../../bus/api.ts';
import { awaitReply } from '../../bus/await-reply.ts';
import type { LoadedListener } from '../../config/load.ts';
import type { OrganismConfig } from '../../config/types.ts';
import { XmlError } from '../../errors.ts';
import { CONTENT_KEY, type ContentBlock, contentText, isToolContent } from '../../tools/content.ts';
import type { Dispatcher } from '../../tools/dispatcher.ts';
import type { ToolRegistry } from '../../tools/registry.ts';
import type { ToolResult } from '../../tools/types.ts';
import { encodePayload } from '../../xml/codec.ts';
import { compileValidator } from '../../xml/validate.ts';
import { MCP_IDENTITY, mcpIdentity } from '../config.ts';
import type { ClientChannel, ClientChannels } from './client-channel.ts';
import { producedText, threadProduced } from './produced.ts';
import { ResourceSubscriptions } from './subscriptions.ts';
import { reportThread, threadChannel } from './thread-notices.ts';

export interface McpHostDeps {
  bus: BusApi & BusQueries;
  listeners(): readonly LoadedListener[];
  tools(): { registry: ToolRegistry; dispatcher: Dispatcher };
  config(): OrganismConfig;
  /** The daemon's channels by thread: a listener call binds its thread to its client here. */
  channels?: ClientChannels;
}

export interface OfferedTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; openWorldHint: boolean };
  kind: 'listener' | 'tool';
}

export interface CallOutcome {
  isError: boolean;
  text: string;
  /** MCP's structuredContent; absent for a content result without a plain value. */
  structured?: Record<string, unknown>;
  /** The tool's own content blocks (toolContent), given to the client as they are instead of `text`. */
  content?: ContentBlock[];
}

/** Capabilities whose effects reach outside the organism. */
const OPEN_WORLD = new Set(['fetch_web', 'send_email', 'post_webhook', 'exec_shell']);

export class McpHost {
  readonly #deps: McpHostDeps;
  /** resources/subscribe of every session; thread URIs are told by the bus (#watchThreads). */
  readonly subscriptions = new ResourceSubscriptions();
  readonly #threadWatches = new Map<string, () => void>();

  constructor(deps: McpHostDeps) {
    this.#deps = deps;
    this.subscriptions.onChange(() => this.#watchThreads());
  }

  /** A bus watch for each subscribed thread URI, and none for a thread nobody watches any more. */
  #watchThreads(): void {
    for (const [uri, stop] of this.#threadWatches) {
      if (this.subscriptions.watched(uri)) continue;
      stop();
      this.#threadWatches.delete(uri);
    }
    for (const uri of this.subscriptions.uris()) {
      const id = threadIdOf(uri);
      if (id === undefined || this.#threadWatches.has(uri)) continue;
      const changed = () => this.subscriptions.changed(uri);
      this.#threadWatches.set(uri, this.#deps.bus.watch(id, { onMessage: changed }));
    }
  }

  /** What the prompt, resource and completion features (src/mcp/server/features) read. */
  get deps(): McpHostDeps {
    return this.#deps;
  }

  /** Listeners with mcp: true, then the identity's granted tools (a name a listener took is skipped). */
  offered(): OfferedTool[] {
    const out: OfferedTool[] = [];
    const { registry } = this.#deps.tools();
    for (const listener of this.#deps.listeners()) {
      if (!listener.config.mcp) continue;
      const schema = listener.definition?.payload?.schema as Record<string, unknown> | undefined;
      // A listener acts with the tools it is granted: its hints are theirs, summed up.
      const tools = listener.config.tools
        .map((t) => registry.get(t)?.definition)
        .filter((d) => d !== undefined);
      out.push({
        name: listener.config.name,
        title: `Organism listener ${listener.config.name}`,
        description: `${listener.config.description} (Sends it a message in a new thread and returns its reply with the thread id.)`,
        inputSchema: { type: 'object', ...(schema ?? {}) },
        annotations: {
          readOnlyHint: tools.every((d) => d.readOnly),
          destructiveHint: tools.some((d) => !d.readOnly),
          openWorldHint: tools.some((d) => d.source === 'external' || OPEN_WORLD.has(d.capability)),
        },
        kind: 'listener',
      });
    }
    const taken = new Set(out.map((t) => t.name));
    for (const name of mcpIdentity(this.#deps.config()).tools) {
      const tool = registry.get(name);
      if (!tool || taken.has(name)) continue;
      const d = tool.definition;
      out.push({
        name,
        description: d.description,
        inputSchema: { type: 'object', ...(d.args as Record<string, unknown>) },
        annotations: {
          readOnlyHint: d.readOnly,
          destructiveHint: !d.readOnly,
          openWorldHint: d.source === 'external' || OPEN_WORLD.has(d.capability),
        },
        kind: 'tool',
      });
    }
    return out;
  }

  /** `channel`: the way back to the calling client (log, progress, sampling, elicitation). */
  async call(
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
    channel?: ClientChannel,
  ): Promise<CallOutcome> {
    const kind = this.#kindOf(name);
    if (!kind) return { isError: true, text: `no tool named ${name}`, structured: { error: 'not_found' } };
    if (kind === 'tool') return this.#callTool(name, args, channel);
    return this.#callListener(name, args, signal, channel);
  }

  /**
   * What offered() would list under `name`, without building the list (a call needs one entry,
   * not every listener's and tool's schema and hints): a listener's name wins over a tool's.
   */
  #kindOf(name: string): OfferedTool['kind'] | undefined {
    for (const listener of this.#deps.listeners()) {
      if (listener.config.mcp && listener.config.name === name) return 'listener';
    }
    const granted = mcpIdentity(this.#deps.config()).tools.includes(name);
    return granted && this.#deps.tools().registry.get(name) ? 'tool' : undefined;
  }

  async #callTool(
    name: string,
    args: Record<string, unknown>,
    channel?: ClientChannel,
  ): Promise<CallOutcome> {
    const result: ToolResult = await this.#deps.tools().dispatcher.call({
      tool: name,
      args,
      listener: MCP_IDENTITY,
      thread: `mcp-${randomUUID()}`,
      ...(channel ? { client: channel } : {}),
    });
    if (result.status === 'ok') {
      const value = result.value;
      if (isToolContent(value)) {
        const blocks = value[CONTENT_KEY];
        return {
          isError: false,
          text: contentText(value),
          content: blocks,
          ...(value.value === undefined ? {} : { structured: { result: value.value } }),
        };
      }
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      return { isError: false, text, structured: { result: value } };
    }
    return {
      isError: true,
      text: `${result.status}: ${result.error.code}: ${result.error.message}`,
      structured: { status: result.status, error: result.error },
    };
  }

  async #callListener(
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
    channel?: ClientChannel,
  ): Promise<CallOutcome> {
    const listener = this.#deps.listeners().find((l) => l.config.name === name);
    if (!listener) return { isError: true, text: `no listener ${name}`, structured: {} };
    const schema = listener.definition?.payload?.schema;
    // Checked as sent, before it becomes XML: the XML round trip would turn an object given for a
    // string into that object's text, and the listener would act on what the client never meant.
    const invalid = schema ? compileValidator(listener.tag, schema)(args) : null;
    if (invalid) {
      const said = invalid.message.replace(`<${listener.tag}> `, '');
      const path = (invalid.details as { path?: string } | undefined)?.path;
      return {
        isError: true,
        text: `invalid arguments for ${name}: ${said}`,
        structured: { error: 'invalid_arguments', ...(path ? { path } : {}) },
      };
    }
    const { bus } = this.#deps;
    let thread: string;
    // Bound before the thread's first message is published: whatever runs in it finds its client.
    let unbind = () => {};
    const { channels } = this.#deps;
    const started =
      channel && channels
        ? (id: string) => {
            unbind = channels.bind(id, threadChannel(channel));
          }
        : undefined;
    try {
      // Bounded as the parse is: arguments that would make more elements stop being encoded there.
      const limits = this.#deps.config().limits;
      const payload = encodePayload(listener.tag, args, schema, limits.max_xml_elements);
      ({ thread } = await bus.inject({
        to: name,
        payload,
        from: MCP_IDENTITY,
        ...(started ? { started } : {}),
      }));
    } catch (error) {
      unbind();
      if (!(error instanceof XmlError)) throw error;
      return {
        isError: true,
        text: `arguments for ${name} refused: ${error.message}`,
        structured: { error: error.code },
      };
    }
    const timeoutMs = mcpIdentity(this.#deps.config()).call_timeout_ms;
    const stopNotices = channel ? reportThread(bus, thread, channel) : () => {};
    let outcome: Awaited<ReturnType<typeof awaitReply>>;
    try {
      outcome = await awaitReply(bus, { thread, target: name, caller: MCP_IDENTITY, timeoutMs, signal });
    } finally {
      stopNotices();
      unbind();
    }
    // `idle` is what a thread that ended without a reply or a failure has always been called here.
    const status = outcome.status === 'ended' ? 'idle' : outcome.status;
    const structured: Record<string, unknown> = { thread, status };
    if (outcome.status === 'replied') structured.reply = outcome.message.payload;
    if ((outcome.status === 'failed' || outcome.status === 'stopped') && outcome.message)
      structured.failure = outcome.message.payload;
    // A thread that ended without a reply still did something: say what it sent on (bounded).
    const produced =
      outcome.status === 'ended'
        ? threadProduced(bus.thread(thread)?.messages ?? [], MCP_IDENTITY)
        : undefined;
    if (produced) structured.produced = produced;
    const text =
      outcome.status === 'replied'
        ? outcome.message.payload
        : outcome.status === 'timeout'
          ? `no reply within ${timeoutMs} ms; thread ${thread} goes on`
          : produced
            ? producedText(name, produced)
            : `the thread ${outcome.status === 'stopped' ? 'was stopped' : 'failed'} without a reply from ${name}${outcome.message ? `: ${outcome.message.payload}` : ''}`;
    const isError = outcome.status !== 'replied' && outcome.status !== 'ended';
    return { isError, text: `${text}\n(thread ${thread})`, structured };
  }

  /** Recent threads, newest first, as resources. */
  threads(limit = 50): Array<{ uri: string; name: string; mimeType: string }> {
    return this.#deps.bus.listThreads({ limit }).threads.map((t) => ({
      uri: `organism://threads/${t.thread}`,
      name: `thread ${t.thread}`,
      mimeType: 'application/json',
    }));
  }

  thread(uri: string): string | undefined {
    const id = threadIdOf(uri);
    if (id === undefined) return undefined;
    const view = this.#deps.bus.thread(id);
    return view ? JSON.stringify(view) : undefined;
  }
}

/** The thread id of an `organism://threads/<id>` URI; undefined for any other URI. */
export function threadIdOf(uri: string): string | undefined {
  const m = /^organism:\/\/threads\/([^/?#]+)$/.exec(uri);
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[1] as string);
  } catch {
    return undefined;
  }
}
