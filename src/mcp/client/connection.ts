/**
 * One configured MCP server as the runtime keeps it: started with the daemon or on first use,
 * listed again on `notifications/tools/list_changed`, and started again with exponential backoff
 * when it dies (a stdio server exits, an HTTP server stops answering). While it is down, `reason`
 * says why, and its tools are unavailable with that reason.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { redactString } from '../../audit/redact.ts';
import { McpError } from '../../errors.ts';
import type { ResolvedServerConfig } from '../config.ts';
import { REMOTE_TOOL_NAME } from '../names.ts';
import { answerElicitation, elicitationCapabilities } from './elicitation.ts';
import { memoryOAuthStore } from './oauth/store.ts';
import { buildTransport, type TransportDeps } from './transport.ts';

/** A tool as the server lists it. */
export interface RemoteTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
    title?: string;
  };
}

export type ConnectionState = 'idle' | 'starting' | 'ready' | 'down' | 'closed';

/** Pages of tools/list followed, and tools kept, per listing. */
const MAX_PAGES = 100;
const MAX_TOOLS = 1000;

/** The most a server's stderr tail may hold, for the reason it died. */
const STDERR_TAIL = 2048;

export class McpConnection {
  readonly server: ResolvedServerConfig;
  readonly #deps: TransportDeps;
  #state: ConnectionState = 'idle';
  #reason: string | undefined;
  #client: Client | undefined;
  #starting: Promise<void> | undefined;
  #attempt = 0;
  #timer: NodeJS.Timeout | undefined;
  #tools = new Map<string, RemoteTool>();
  #stderr = '';
  #pid: number | null = null;
  #relisting = false;
  #relistAgain = false;
  /** Bumped per connection, so a late close of an old one is not taken for the new one's. */
  #generation = 0;
  readonly #watchers = new Set<() => void>();
  /** Tools of the last listing whose names MCP does not allow, left out (JSON-quoted in warnings). */
  skipped: string[] = [];
  /** How many times the server was (re)started; for tests and `describe`. */
  starts = 0;

  constructor(server: ResolvedServerConfig, deps: TransportDeps) {
    this.server = server;
    // One token store for every (re)connection of this server, whatever the caller gave.
    this.#deps = { ...deps, oauthStore: deps.oauthStore ?? memoryOAuthStore() };
  }

  get state(): ConnectionState {
    return this.#state;
  }

  /** Why the server cannot be used now, or null when it is up (or not started yet, for a lazy one). */
  get reason(): string | null {
    if (this.#state === 'ready') return null;
    if (this.#state === 'idle') return null;
    if (this.#state === 'starting') return this.#reason ?? `server ${this.server.name} is starting`;
    if (this.#state === 'closed') return `server ${this.server.name} is shut down`;
    return this.#reason ?? `server ${this.server.name} is down`;
  }

  /** A stdio server's process id (its sandbox's, outside it) while it runs; null otherwise. */
  get pid(): number | null {
    return this.#client ? this.#pid : null;
  }

  /** The SDK client while connected (the benchmark's floor calls the same server through it). */
  get sdkClient(): Client | undefined {
    return this.#client;
  }

  /** The server's tools, after include/exclude, as last listed. */
  get tools(): ReadonlyMap<string, RemoteTool> {
    return this.#tools;
  }

  /** `fn` runs whenever the tool list or the state changes. Returns the unsubscribe. */
  watch(fn: () => void): () => void {
    this.#watchers.add(fn);
    return () => this.#watchers.delete(fn);
  }

  #notify(): void {
    for (const fn of this.#watchers) {
      try {
        fn();
      } catch {
        // a watcher's failure is its own
      }
    }
  }

  /** Connects and lists the tools (once at a time); resolves when up, rejects with why not. */
  start(): Promise<void> {
    if (this.#state === 'ready') return Promise.resolve();
    if (this.#state === 'closed')
      return Promise.reject(new McpError('mcp.unavailable', this.reason as string));
    this.#starting ??= this.#connect().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  async #connect(): Promise<void> {
    clearTimeout(this.#timer);
    this.#state = 'starting';
    const generation = ++this.#generation;
    this.starts++;
    this.#stderr = '';
    let client: Client | undefined;
    try {
      const built = await buildTransport(this.server, this.#deps);
      built.stderr?.on('data', (chunk: Buffer) => {
        this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
      });
      const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
      const { ElicitRequestSchema, ToolListChangedNotificationSchema } = await import(
        '@modelcontextprotocol/sdk/types.js'
      );
      client = new Client(
        { name: 'organism', version: '1' },
        { capabilities: elicitationCapabilities(this.server) },
      );
      if (this.server.elicitation === 'defaults')
        client.setRequestHandler(ElicitRequestSchema, (request) =>
          answerElicitation(this.server, request.params),
        );
      client.onclose = () => {
        if (generation !== this.#generation) return;
        const stdio = this.server.url === undefined;
        const starting = this.#state === 'starting';
        // An HTTP connection that fails while starting makes connect() reject with why (a refused
        // sign-in, an unset client secret): that reason is the one to show, not "closed".
        if (starting && !stdio) return;
        this.#lost(
          stdio
            ? `its process exited${starting ? ' before it was ready' : ''}`
            : `its connection closed${starting ? ' while starting' : ''}`,
        );
      };
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        if (generation === this.#generation) this.#relistSoon(generation);
      });
      await withTimeout(client.connect(built.transport), this.server.startup_timeout_ms, 'connecting');
      this.#pid = (built.transport as { pid?: number | null }).pid ?? null;
      this.#client = client;
      await this.#relist();
      if (generation !== this.#generation) return;
      this.#state = 'ready';
      this.#reason = undefined;
      this.#attempt = 0;
      this.#notify();
    } catch (error) {
      if (generation === this.#generation) {
        this.#client = undefined;
        // Not awaited: closing a stdio server that ignores its stdin waits ~2 s, then SIGTERM and
        // ~2 s more before SIGKILL, and the daemon's start would wait that on top of
        // startup_timeout_ms. It ends in the background; a restart starts a new process.
        void client?.close().catch(() => {});
        this.#down(`could not start: ${message(error)}`);
      }
      // #reason names the server already ("server fs is down: ..."): not twice.
      throw new McpError('mcp.unavailable', this.#reason ?? `server ${this.server.name}: ${message(error)}`);
    }
  }

  /**
   * A list_changed: one listing at a time, and the notifications that came meanwhile make one more
   * (a server announcing changes in a loop gets a listing per round trip, not one per notification).
   */
  #relistSoon(generation: number): void {
    if (this.#relisting) {
      this.#relistAgain = true;
      return;
    }
    this.#relisting = true;
    this.#relist()
      .catch((error: unknown) => {
        if (generation === this.#generation) this.#lost(message(error));
      })
      .finally(() => {
        this.#relisting = false;
        if (this.#relistAgain && generation === this.#generation) {
          this.#relistAgain = false;
          this.#relistSoon(generation);
        }
      });
  }

  /** Lists the tools again (every page), keeping those include/exclude let through. */
  async #relist(): Promise<void> {
    const client = this.#client;
    if (!client) return;
    const tools = new Map<string, RemoteTool>();
    const skipped: string[] = [];
    let pages = 0;
    let cursor: string | undefined;
    do {
      const page = await withTimeout(
        client.listTools(cursor === undefined ? {} : { cursor }),
        this.server.timeout_ms,
        'listing tools',
      );
      for (const tool of page.tools) {
        // A name MCP does not allow (markup, spaces, other scripts) cannot be granted: not offered.
        if (!REMOTE_TOOL_NAME.test(tool.name)) {
          skipped.push(tool.name);
          continue;
        }
        if (this.server.include && !this.server.include.includes(tool.name)) continue;
        if (this.server.exclude.includes(tool.name)) continue;
        tools.set(tool.name, {
          name: tool.name,
          description: tool.description ?? '',
          inputSchema: tool.inputSchema as Record<string, unknown>,
          ...(tool.annotations ? { annotations: tool.annotations } : {}),
        });
      }
      cursor = page.nextCursor;
      // A server that pages forever, or lists without end, is cut off; what came so far is kept.
      if (++pages >= MAX_PAGES || tools.size >= MAX_TOOLS) break;
    } while (cursor);
    this.#tools = tools;
    this.skipped = skipped;
    this.#notify();
  }

  /** The connection died: down with why, and a restart scheduled. */
  #lost(why: string): void {
    if (this.#state === 'closed') return;
    this.#generation++;
    const client = this.#client;
    this.#client = undefined;
    client?.close().catch(() => {});
    this.#down(why);
  }

  #down(why: string): void {
    const tail = this.#stderr.trim().split('\n').pop();
    const said = tail ? ` (stderr: ${redactString(tail).slice(0, 200)})` : '';
    const delay = Math.min(this.server.restart_initial_ms * 2 ** this.#attempt, this.server.restart_max_ms);
    this.#attempt++;
    this.#state = 'down';
    this.#reason = `server ${this.server.name} is down: ${why}${said}; restarting in ${Math.ceil(delay / 100) / 10} s`;
    this.#notify();
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.start().catch(() => {}); // a failed restart schedules the next one itself
    }, delay);
    this.#timer.unref();
  }

  /**
   * Calls a tool. A lazy server is started first. When `timeoutMs` passes, the SDK rejects the
   * call and sends the server `notifications/cancelled` for it.
   */
  async call(tool: string, args: Record<string, unknown>, timeoutMs: number) {
    if (this.#state !== 'ready') {
      if (this.#state === 'down' || this.#state === 'closed')
        throw new McpError('mcp.unavailable', this.reason as string);
      await this.start();
    }
    const client = this.#client;
    if (!client) throw new McpError('mcp.unavailable', this.reason ?? `server ${this.server.name} is down`);
    try {
      return await client.callTool({ name: tool, arguments: args }, undefined, { timeout: timeoutMs });
    } catch (error) {
      // An HTTP server that stopped answering is down like a stdio server that exited.
      if (this.server.url !== undefined && isConnectionFailure(error)) this.#lost(message(error));
      throw error;
    }
  }

  /** Stops the server (the stdio child is killed with its sandbox) and any restart. */
  async close(): Promise<void> {
    this.#state = 'closed';
    this.#generation++;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    await client?.close().catch(() => {});
  }
}

function message(error: unknown): string {
  return redactString(error instanceof Error ? error.message : String(error));
}

function isConnectionFailure(error: unknown): boolean {
  const text = `${(error as Error)?.message ?? ''} ${String((error as { cause?: unknown })?.cause ?? '')}`;
  return /fetch failed|ECONNREFUSED|ECONNRESET|socket hang up|other side closed/i.test(text);
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new McpError('mcp.timeout', `${what} took over ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
