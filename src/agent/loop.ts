/**
 * The agent loop: call the model; run the tool calls it asks for through ctx.tools.call (the
 * dispatcher: grants, guards, audit), independent calls in parallel; send its messages to peers on
 * the bus and, for peers that reply, suspend until the replies come back at onReply; feed every
 * result back framed; repeat. It ends on a final answer (respond to the caller), on max_turns or
 * on the token budget, each with an `<answer>` that says which, so the thread always shows how the
 * task ended.
 */
import { knownSecrets } from '../audit/redact.ts';
import type { MessageView } from '../bus/message.ts';
import type { HandlerContext, HandlerResult, IncomingReply, Outgoing } from '../listener/types.ts';
import type { LlmClient } from './client.ts';
import {
  frameHistory,
  frameLocalRefusal,
  framePeerReply,
  frameSent,
  frameTask,
  frameToolResult,
} from './frame.ts';
import type { AgentLoopOptions } from './options.ts';
import type { AgentFunction } from './prompt.ts';
import { type LoopState, LoopStore } from './state.ts';
import type { AgentLogger, ToolCallRequest, ToolCallResult } from './types.ts';
import type { UsageTracker } from './usage.ts';

export type AnswerStatus = 'done' | 'max_turns' | 'budget' | 'error' | 'busy';

/** What the agent responds with: `<answer><text/><status/><backend/></answer>`. */
export interface Answer {
  text: string;
  status: AnswerStatus;
  backend?: string;
  turns: number;
}

export interface AgentLoopDeps {
  name: string;
  system: string;
  functions: readonly AgentFunction[];
  maxTurns: number;
  /** budget.tokens: most tokens this agent may use in one thread. */
  budgetTokens: number | undefined;
  llm: LlmClient;
  usage: UsageTracker;
  history: ((thread: string) => readonly MessageView[] | undefined) | undefined;
  options: AgentLoopOptions;
  logger: AgentLogger;
}

export class AgentLoop {
  readonly #d: AgentLoopDeps;
  readonly #byName: Map<string, AgentFunction>;
  readonly loops: LoopStore;

  constructor(deps: AgentLoopDeps) {
    this.#d = deps;
    this.#byName = new Map(deps.functions.map((f) => [f.name, f]));
    this.loops = new LoopStore(
      deps.options.maxPendingLoops,
      deps.options.pendingTtlMs,
      Date.now,
      (state, why) =>
        deps.logger.warn(
          { agent: deps.name, thread: state.thread, why },
          `agent ${deps.name} dropped a loop waiting for a peer reply (${why === 'ttl' ? 'waited too long' : 'too many waiting loops'}); its caller gets no answer`,
        ),
    );
  }

  /** A new task. */
  async start(task: string, ctx: HandlerContext): Promise<HandlerResult> {
    this.loops.sweep();
    if (this.loops.has(ctx.thread)) {
      return ctx.respond(
        answerPayload({
          text: `${this.#d.name} is already working on a task in this thread; send this one when it has answered.`,
          status: 'busy',
          turns: 0,
        }),
      );
    }
    const history = this.#history(ctx);
    const content = history === '' ? frameTask(ctx.from, task) : `${history}\n\n${frameTask(ctx.from, task)}`;
    const state: LoopState = {
      thread: ctx.thread,
      caller: ctx.from,
      messages: [{ role: 'user', content }],
      turns: 0,
      phase: 'running',
      calls: [],
      results: new Map(),
      pending: [],
      lastText: '',
      backend: '',
      updated: 0,
    };
    this.loops.set(state);
    return this.#run(state, ctx, []);
  }

  /** A reply, `<huh>` or `<SystemError>` addressed to the agent. */
  async reply(reply: IncomingReply, ctx: HandlerContext): Promise<HandlerResult> {
    const state = this.loops.get(ctx.thread);
    if (state?.phase !== 'waiting' || state.pending.length === 0) {
      this.#d.logger.debug(
        { agent: this.#d.name, thread: ctx.thread, from: ctx.from },
        'reply with no loop waiting for it',
      );
      return undefined;
    }
    // A response comes from the peer itself; a <huh> or <SystemError> comes from the runtime and
    // concerns the oldest message still unanswered.
    const index = reply.kind === 'response' ? state.pending.findIndex((p) => p.peer === ctx.from) : 0;
    if (index < 0) {
      this.#d.logger.debug(
        { agent: this.#d.name, thread: ctx.thread, from: ctx.from },
        'reply from a peer not asked',
      );
      return undefined;
    }
    const [pending] = state.pending.splice(index, 1);
    const call = state.calls.find((c) => c.id === pending!.callId)!;
    state.results.set(
      call.id,
      framePeerReply(call.id, call.name, pending!.peer, reply, this.#d.options.resultBytes),
    );
    if (state.pending.length > 0) {
      this.loops.set(state);
      return undefined;
    }
    this.#closeTurn(state);
    return this.#run(state, ctx, []);
  }

  async #run(state: LoopState, ctx: HandlerContext, out: Outgoing[]): Promise<HandlerResult> {
    state.phase = 'running';
    try {
      for (;;) {
        if (state.turns >= this.#d.maxTurns) {
          return this.#finish(
            state,
            ctx,
            out,
            'max_turns',
            this.#stoppedText(state, `its limit of ${this.#d.maxTurns} turns (max_turns)`),
          );
        }
        const used = this.#d.usage.threadTokens(this.#d.name, state.thread);
        if (this.#d.budgetTokens !== undefined && used >= this.#d.budgetTokens) {
          return this.#finish(
            state,
            ctx,
            out,
            'budget',
            this.#stoppedText(
              state,
              `its token budget (${used} of ${this.#d.budgetTokens} tokens used in this thread)`,
            ),
          );
        }
        let completion: Awaited<ReturnType<LlmClient['complete']>>;
        try {
          completion = await this.#d.llm.complete(
            {
              system: this.#d.system,
              messages: state.messages,
              functions: this.#d.functions,
              maxTokens: this.#d.options.maxTokensPerTurn,
            },
            ctx.signal,
          );
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          this.#d.logger.warn(
            { agent: this.#d.name, thread: state.thread, err: message },
            'agent could not reach a model',
          );
          return this.#finish(
            state,
            ctx,
            out,
            'error',
            `${this.#d.name} could not get an answer from a model: ${message}`,
          );
        }
        const { turn, backend } = completion;
        this.#d.usage.record(this.#d.name, state.thread, turn.usage);
        state.turns++;
        state.backend = backend;
        if (turn.text.trim() !== '') state.lastText = turn.text;
        if (turn.toolCalls.length === 0) return this.#finish(state, ctx, out, 'done', turn.text);
        const calls = uniqueIds(turn.toolCalls);
        state.messages.push({ role: 'assistant', text: turn.text, toolCalls: calls });
        state.calls = calls;
        state.results = new Map();
        state.pending = [];
        await this.#dispatch(state, ctx, out);
        if (state.pending.length > 0) {
          state.phase = 'waiting';
          this.loops.set(state);
          return out;
        }
        this.#closeTurn(state);
      }
    } catch (error) {
      this.loops.delete(state.thread);
      throw error;
    }
  }

  /** Runs the turn's calls: tools in parallel through the dispatcher, peer messages onto `out`. */
  async #dispatch(state: LoopState, ctx: HandlerContext, out: Outgoing[]): Promise<void> {
    const { resultBytes } = this.#d.options;
    const tools: Array<Promise<void>> = [];
    for (const call of state.calls) {
      if (call.argsError !== undefined) {
        state.results.set(
          call.id,
          frameLocalRefusal(
            call.id,
            call.name,
            'InvalidArguments',
            `invalid arguments for ${call.name}: ${call.argsError}`,
          ),
        );
        continue;
      }
      const fn = this.#byName.get(call.name);
      if (fn && fn.kind !== 'tool') {
        out.push(ctx.send(fn.target, call.args ?? {}));
        if (fn.kind === 'tell') state.results.set(call.id, frameSent(call.id, call.name, fn.target));
        else state.pending.push({ callId: call.id, peer: fn.target });
        continue;
      }
      // Granted or not, known or not: the dispatcher decides (PermissionDenied, ToolNotFound, ...).
      const source = fn?.source ?? 'native';
      tools.push(
        ctx.tools.call(call.name, call.args ?? {}).then((result) => {
          state.results.set(call.id, frameToolResult(call.id, call.name, result, source, resultBytes));
        }),
      );
    }
    await Promise.all(tools);
  }

  /** Every call of the turn is answered: hand the answers to the model in call order. */
  #closeTurn(state: LoopState): void {
    const results: ToolCallResult[] = state.calls.map(
      (c) =>
        state.results.get(c.id) ??
        frameLocalRefusal(c.id, c.name, 'NoResult', 'no result was recorded for this call'),
    );
    state.messages.push({ role: 'tool', results });
    state.calls = [];
    state.results = new Map();
  }

  #finish(
    state: LoopState,
    ctx: HandlerContext,
    out: Outgoing[],
    status: AnswerStatus,
    text: string,
  ): Outgoing[] {
    this.loops.delete(state.thread);
    const answer: Answer = {
      // The model's words and error texts were scrubbed where they came in; this is the last gate.
      text: knownSecrets.redact(text),
      status,
      turns: state.turns,
      ...(state.backend ? { backend: state.backend } : {}),
    };
    this.#d.logger.info(
      { agent: this.#d.name, thread: state.thread, status, turns: state.turns, backend: state.backend },
      `agent ${this.#d.name} finished: ${status}`,
    );
    return [...out, ctx.respond(answerPayload(answer))];
  }

  #stoppedText(state: LoopState, why: string): string {
    const last = state.lastText.trim();
    return `${this.#d.name} stopped after ${state.turns} turn${state.turns === 1 ? '' : 's'}: it reached ${why} before a final answer.${last ? ` Its last words: ${last}` : ''}`;
  }

  /** The agent's earlier messages in the thread, up to the message that brought this task. */
  #history(ctx: HandlerContext): string {
    const all = this.#d.history?.(ctx.thread);
    if (!all || all.length === 0) return '';
    let end = all.length;
    for (let i = all.length - 1; i >= 0; i--) {
      const m = all[i]!;
      if (m.to === ctx.self && m.kind === 'message') {
        end = i;
        break;
      }
    }
    // Only what this agent itself sent or received: other branches of the thread are not its business.
    const own = all.slice(0, end).filter((m) => m.from === ctx.self || m.to === ctx.self);
    const earlier = own.slice(Math.max(0, own.length - this.#d.options.historyMessages));
    return frameHistory(earlier, this.#d.options.historyBytes);
  }
}

export function answerPayload(answer: Answer): Record<string, unknown> {
  return {
    text: answer.text === '' ? '(no text)' : answer.text,
    status: answer.status,
    turns: answer.turns,
    ...(answer.backend ? { backend: answer.backend } : {}),
  };
}

/** Providers should give unique ids; a model that repeats one still gets one answer per call. */
function uniqueIds(calls: ToolCallRequest[]): ToolCallRequest[] {
  const seen = new Set<string>();
  return calls.map((c, i) => {
    if (!seen.has(c.id)) {
      seen.add(c.id);
      return c;
    }
    const id = `${c.id}_${i}`;
    seen.add(id);
    return { ...c, id };
  });
}
