/**
 * The HandlerContext a handler receives. A class rather than an object literal so each delivery
 * allocates one small object and the methods live on the prototype.
 */
import type { Logger } from 'pino';
import type { HandlerContext, ListenerLogger, Outgoing, PayloadInput } from '../listener/types.ts';
import type { ToolCaller, ToolResult } from '../tools/types.ts';
import type { RuntimeListener } from './listeners.ts';

/**
 * Where a context's tool calls go: one object for every delivery (the bus's handler step), told
 * which run a call belongs to, so a delivery costs no closure over its run for calls most
 * handlers never make.
 */
export interface ToolCallPort<Run> {
  callTool(run: Run, ctx: DeliveryContext, name: string, args: unknown, key?: string): Promise<ToolResult>;
}

export class DeliveryContext implements HandlerContext {
  #cachedLog: ListenerLogger | undefined;
  #cachedTools: ToolCaller | undefined;
  // Created on first use of `signal`: most handlers never look, and one per hop is measurable.
  #controller: AbortController | undefined;
  #abortReason: unknown;
  #aborted = false;

  constructor(
    private readonly listener: RuntimeListener,
    readonly thread: string,
    readonly from: string,
    readonly tag: string,
    private readonly baseLogger: Logger,
    private readonly port: ToolCallPort<unknown>,
    private readonly run: unknown,
  ) {}

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  /** Timeout or shutdown: the handler's signal fires (now, or as soon as it is first read). */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }

  get self(): string {
    return this.listener.name;
  }

  get peers(): readonly string[] {
    return this.listener.peerList;
  }

  get usage(): string {
    return this.listener.usage;
  }

  get log(): ListenerLogger {
    if (!this.#cachedLog) {
      const child = this.baseLogger.child({ listener: this.listener.name, thread: this.thread });
      const wrap =
        (level: 'debug' | 'info' | 'warn' | 'error') =>
        (msg: string, fields?: Record<string, unknown>): void => {
          child[level](fields ?? {}, msg);
        };
      this.#cachedLog = {
        debug: wrap('debug'),
        info: wrap('info'),
        warn: wrap('warn'),
        error: wrap('error'),
      };
    }
    return this.#cachedLog;
  }

  get tools(): ToolCaller {
    if (!this.#cachedTools) {
      const { port, run } = this;
      this.#cachedTools = { call: (name, args, key) => port.callTool(run, this, name, args, key) };
    }
    return this.#cachedTools;
  }

  respond(payload: PayloadInput): Outgoing {
    return { kind: 'respond', payload };
  }

  send(to: string, payload: PayloadInput): Outgoing {
    return { kind: 'send', to, payload };
  }
}
