/**
 * The tool runtime as the daemon runs it across reloads. The bus holds one ToolPort for its whole
 * life; a reload swaps the runtime behind it. Calls already running finish on the runtime they
 * started on, which is closed (with its resources, unless the new one shares them) once its last
 * call returns. All runtimes write through one audit sink, so the hash chain has one writer.
 */
import type { AuditLog, AuditSink } from '../audit/log.ts';
import type { AuditEntry } from '../audit/record.ts';
import type { ToolPort } from '../bus/bus.ts';
import type { ClientChannels } from '../mcp/server/client-channel.ts';
import type { ToolRuntime } from '../tools/runtime.ts';
import type { Resources } from '../tools/services.ts';
import type { ToolResult } from '../tools/types.ts';

interface Generation {
  runtime: ToolRuntime;
  /** Resources this generation alone owns (closed with it); undefined when shared with the next. */
  resources: Resources | undefined;
  calls: number;
  retired: boolean;
  closed?: Promise<void>;
}

export class SwappableTools implements ToolPort {
  #current: Generation;
  readonly #retired = new Set<Generation>();
  readonly #warn: (message: string) => void;
  readonly #clients: Pick<ClientChannels, 'forThread'> | undefined;

  /** `clients`: a call in a thread an MCP call started gets that client (ToolRunContext.client). */
  constructor(
    runtime: ToolRuntime,
    resources: Resources,
    warn: (message: string) => void,
    clients?: Pick<ClientChannels, 'forThread'>,
  ) {
    this.#current = { runtime, resources, calls: 0, retired: false };
    this.#warn = warn;
    this.#clients = clients;
  }

  get runtime(): ToolRuntime {
    return this.#current.runtime;
  }

  async call(request: Parameters<ToolPort['call']>[0]): Promise<ToolResult> {
    const generation = this.#current;
    generation.calls++;
    const client = request.client === undefined ? this.#clients?.forThread(request.thread) : undefined;
    try {
      return await generation.runtime.dispatcher.call(client ? { ...request, client } : request);
    } finally {
      generation.calls--;
      if (generation.retired && generation.calls === 0) void this.#close(generation);
    }
  }

  /**
   * Makes `runtime` the one new calls use. `resources` is the new runtime's; when it is the same
   * object as the current one's, ownership passes on and the old generation leaves it open.
   */
  swap(runtime: ToolRuntime, resources: Resources): void {
    const old = this.#current;
    const shared = old.resources === resources;
    if (shared) old.resources = undefined;
    this.#current = { runtime, resources, calls: 0, retired: false };
    old.retired = true;
    this.#retired.add(old);
    if (old.calls === 0) void this.#close(old);
  }

  /** Closes the current runtime and any retired one still finishing. */
  async close(): Promise<void> {
    const all = [this.#current, ...this.#retired];
    await Promise.all(all.map((g) => this.#close(g)));
  }

  #close(generation: Generation): Promise<void> {
    generation.closed ??= (async () => {
      await generation.runtime
        .close()
        .catch((error: unknown) => this.#warn(`tool runtime did not close: ${String(error)}`));
      for (const failure of (await generation.resources?.closeAll()) ?? [])
        this.#warn(`a tool resource did not close cleanly: ${failure}`);
      this.#retired.delete(generation);
    })();
    return generation.closed;
  }
}

/**
 * The sink handed to every tool runtime: writes to the daemon's one AuditLog and tells `observe`
 * (metrics, the live stream). Its close() only flushes: the daemon closes the log itself, last.
 */
export function auditTee(log: AuditLog, observe: (entry: AuditEntry) => void): AuditSink {
  return {
    append(entry) {
      log.append(entry);
      try {
        observe(entry);
      } catch {
        // Metrics and the stream are observers; they never cost an audit record.
      }
    },
    flush: () => log.flush(),
    close: () => log.flush(),
    refusal: () => log.refusal(),
  };
}
