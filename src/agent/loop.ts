/**
 * The agent loop: call the model; run the tool calls it asks for through ctx.tools.call (the
 * dispatcher: grants, guards, audit), independent calls in parallel; send its messages to peers on
 * the bus and, for peers that reply, suspend until the replies come back at onReply; feed every
 * result back framed; repeat. It ends on a final answer (respond to the caller), on max_turns or
 * on the token budget, each with an `<answer>` that says which, so the thread always shows how the
 * task ended.
 *
 * With a `record` function, every model turn is written into the thread (record.ts), so a task
 * this process does not hold in memory (after a restart, when its task message is delivered again
 * or a reply arrives for it) goes on from its last completed turn instead of starting over or
 * vanishing (resume.ts).
 */
import { knownSecrets } from '../audit/redact.ts';
import type { MessageView } from '../bus/message.ts';
import type { HandlerContext, HandlerResult, IncomingReply, Outgoing } from '../listener/types.ts';
import { type AgentSpan, setTraceScope, traceScopeOf } from '../telemetry/types.ts';
import { type Answer, type AnswerStatus, answerPayload, answerStatus } from './answer.ts';
import type { LlmClient } from './client.ts';
import {
  frameInvalidArguments,
  frameLocalRefusal,
  frameOwnHistory,
  framePeerReply,
  frameSent,
  frameTask,
  frameToolResult,
} from './frame.ts';
import type { AgentLoopOptions } from './options.ts';
import type { AgentFunction } from './prompt.ts';
import { callKey, type RecordedCall, type RecordFn, turnEntry } from './record.ts';
import {
  findDelivered,
  findReplied,
  type RebuildOptions,
  type Rebuilt,
  recordedThreadTokens,
  taskOf,
} from './resume.ts';
import { type LoopState, LoopStore, newLoopState } from './state.ts';
import type { AgentLogger, CompletionTurn, ToolCallRequest, ToolCallResult } from './types.ts';
import type { UsageTracker } from './usage.ts';

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
  /** Writes the agent's model turns into the thread; without it a task cannot resume after a restart. */
  record?: RecordFn | undefined;
  options: AgentLoopOptions;
  logger: AgentLogger;
}

export class AgentLoop {
  readonly #d: AgentLoopDeps;
  readonly #byName: Map<string, AgentFunction>;
  readonly #rebuildOptions: RebuildOptions;
  readonly loops: LoopStore;

  constructor(deps: AgentLoopDeps) {
    this.#d = deps;
    this.#byName = new Map(deps.functions.map((f) => [f.name, f]));
    this.#rebuildOptions = { functions: this.#byName, resultBytes: deps.options.resultBytes };
    this.loops = new LoopStore(
      deps.options.maxPendingLoops,
      deps.options.pendingTtlMs,
      Date.now,
      (state, why) =>
        deps.logger.warn(
          { agent: deps.name, thread: state.thread, why },
          `agent ${deps.name} dropped a loop waiting for a peer reply (${why === 'ttl' ? 'waited too long' : 'too many waiting loops'}); ${deps.record ? 'if the reply still comes, the task resumes from the thread history' : 'its caller gets no answer'}`,
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
    const all = this.#d.history?.(ctx.thread) ?? [];
    this.#seedUsage(ctx.thread, all);
    const { at, rebuilt } = findDelivered(all, ctx.self, task, this.#rebuildOptions);
    const state = newLoopState(
      ctx.thread,
      ctx.from,
      at >= 0 ? all[at]!.id : '',
      this.#firstMessage(all, at, ctx.self, ctx.from, task),
    );
    if (rebuilt) return this.#resume(state, rebuilt, ctx);
    this.loops.set(state);
    return this.#run(state, ctx, []);
  }

  /** A reply, `<huh>` or `<SystemError>` addressed to the agent. */
  async reply(reply: IncomingReply, ctx: HandlerContext): Promise<HandlerResult> {
    const state = this.loops.get(ctx.thread);
    if (!state) return this.#replyToRecorded(reply, ctx);
    if (state.phase !== 'waiting' || state.pending.length === 0) {
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

  /**
   * Tracing on: this run of the task (until it answers, or waits for a peer) is one `invoke_agent`
   * span under the hop; its model calls and tool calls are that span's children.
   */
  async #run(
    state: LoopState,
    ctx: HandlerContext,
    out: Outgoing[],
    resumed = false,
  ): Promise<HandlerResult> {
    const hop = traceScopeOf(ctx);
    if (!hop) return this.#turns(state, ctx, out, resumed, undefined);
    const span = hop.agent(this.#d.name, state.thread);
    setTraceScope(ctx, span);
    try {
      const result = await this.#turns(state, ctx, out, resumed, span);
      span.end(state.phase === 'waiting' ? 'waiting' : answerStatus(result));
      return result;
    } catch (error) {
      span.end('error', error);
      throw error;
    } finally {
      setTraceScope(ctx, hop);
    }
  }

  /** `resumed`: the turn in progress (rebuilt from the thread) is answered before the next one. */
  async #turns(
    state: LoopState,
    ctx: HandlerContext,
    out: Outgoing[],
    resumed: boolean,
    span: AgentSpan | undefined,
  ): Promise<HandlerResult> {
    state.phase = 'running';
    try {
      if (resumed && state.calls.length > 0 && (await this.#answerTurn(state, ctx, out))) return out;
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
        const request = {
          system: this.#d.system,
          messages: state.messages,
          functions: this.#d.functions,
          maxTokens: this.#d.options.maxTokensPerTurn,
          thread: state.thread,
        };
        const chat = span?.chat(request);
        try {
          completion = await this.#d.llm.complete(request, ctx.signal);
          chat?.end({ backend: completion.backend, usage: completion.turn.usage, output: completion.turn });
        } catch (error) {
          chat?.end({ error });
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
        const calls = uniqueIds(turn.toolCalls);
        const keyed: RecordedCall[] = calls.map((c, i) => ({ ...c, key: callKey(state.turns, i, c) }));
        this.#recordTurn(state, turn, keyed);
        if (turn.toolCalls.length === 0) return this.#finish(state, ctx, out, 'done', turn.text);
        state.messages.push({ role: 'assistant', text: turn.text, toolCalls: calls });
        state.calls = keyed;
        state.results = new Map();
        state.pending = [];
        if (await this.#answerTurn(state, ctx, out)) return out;
      }
    } catch (error) {
      this.loops.delete(state.thread);
      throw error;
    }
  }

  /** Answers the turn's calls; true when the loop now waits for peers' replies (suspended). */
  async #answerTurn(state: LoopState, ctx: HandlerContext, out: Outgoing[]): Promise<boolean> {
    await this.#dispatch(state, ctx, out);
    if (state.pending.length > 0) {
      state.phase = 'waiting';
      this.loops.set(state);
      return true;
    }
    this.#closeTurn(state);
    return false;
  }

  /** Runs the turn's calls: tools in parallel through the dispatcher, peer messages onto `out`. */
  async #dispatch(state: LoopState, ctx: HandlerContext, out: Outgoing[]): Promise<void> {
    const { resultBytes } = this.#d.options;
    const tools: Array<Promise<void>> = [];
    for (const call of state.calls) {
      // Resuming: calls answered (or sent and awaiting their reply) before the restart stay so.
      if (state.results.has(call.id) || state.pending.some((p) => p.callId === call.id)) continue;
      if (call.argsError !== undefined) {
        state.results.set(call.id, frameInvalidArguments(call.id, call.name, call.argsError));
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
        // The model knows an MCP tool as `server__tool` (src/mcp/names.ts); the registry as `server.tool`.
        ctx.tools.call(fn?.target ?? call.name, call.args ?? {}, call.key).then((result) => {
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

  /** The first user message: the agent's earlier messages in the thread, then the task. */
  #firstMessage(all: readonly MessageView[], at: number, self: string, from: string, task: string): string {
    const { historyMessages, historyBytes } = this.#d.options;
    const history = frameOwnHistory(all, at < 0 ? all.length : at, self, historyMessages, historyBytes);
    return history === '' ? frameTask(from, task) : `${history}\n\n${frameTask(from, task)}`;
  }

  /** Tokens used in the thread before this process counted them, from the agent's last turn record. */
  #seedUsage(thread: string, all: readonly MessageView[]): void {
    if (all.length === 0 || this.#d.usage.knows(this.#d.name, thread)) return;
    this.#d.usage.seed(this.#d.name, thread, recordedThreadTokens(all, this.#d.name));
  }

  #recordTurn(state: LoopState, turn: CompletionTurn, calls: RecordedCall[]): void {
    if (!this.#d.record || state.task === '') return;
    this.#d.record(
      state.thread,
      turnEntry(this.#d.name, {
        task: state.task,
        turn: state.turns,
        text: turn.text,
        calls,
        usage: turn.usage,
        threadTokens: this.#d.usage.threadTokens(this.#d.name, state.thread),
        backend: state.backend,
      }),
    );
  }

  /** A reply for a loop this process does not hold: the task goes on from the thread's record. */
  async #replyToRecorded(reply: IncomingReply, ctx: HandlerContext): Promise<HandlerResult> {
    const all = this.#d.history?.(ctx.thread) ?? [];
    const { at, rebuilt } = findReplied(all, ctx.self, ctx.from, reply, this.#rebuildOptions);
    if (!rebuilt || rebuilt.answered || (rebuilt.final === undefined && rebuilt.calls.length === 0)) {
      this.#d.logger.debug(
        { agent: this.#d.name, thread: ctx.thread, from: ctx.from },
        'reply with no loop waiting for it',
      );
      return undefined;
    }
    this.#seedUsage(ctx.thread, all);
    const task = all[at]!;
    const state = newLoopState(
      ctx.thread,
      task.from,
      task.id,
      this.#firstMessage(all, at, ctx.self, task.from, taskOf(task.payload)),
    );
    return this.#resume(state, rebuilt, ctx);
  }

  /** Goes on with a task from what its thread records: the turn in progress, then the next turns. */
  async #resume(state: LoopState, rebuilt: Rebuilt, ctx: HandlerContext): Promise<HandlerResult> {
    state.messages.push(...rebuilt.messages);
    state.turns = rebuilt.turns;
    state.lastText = rebuilt.lastText;
    state.backend = rebuilt.backend;
    state.calls = rebuilt.calls;
    state.results = rebuilt.results;
    state.pending = rebuilt.pending;
    const out: Outgoing[] = rebuilt.unsent.map((u) => ctx.send(u.target, u.args));
    if (rebuilt.answered) {
      this.#d.logger.info(
        { agent: this.#d.name, thread: state.thread, turns: state.turns },
        `agent ${this.#d.name} had already answered this task (thread history); not answering again`,
      );
      return out;
    }
    this.#d.logger.info(
      {
        agent: this.#d.name,
        thread: state.thread,
        turns: state.turns,
        tokens: this.#d.usage.threadTokens(this.#d.name, state.thread),
      },
      `agent ${this.#d.name} resumes its task after turn ${state.turns}, from the thread history`,
    );
    if (rebuilt.final) return this.#finish(state, ctx, out, 'done', rebuilt.final.text);
    this.loops.set(state);
    return this.#run(state, ctx, out, true);
  }
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
