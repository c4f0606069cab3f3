/**
 * Resuming an agent's task from its thread's history, for a loop this process does not hold (the
 * daemon restarted, or was reloaded): the task's message, the agent's `model-turn` records, the
 * tool results and the peers' replies give back the conversation up to the last completed turn,
 * the turns taken and the calls of the turn in progress. The loop then goes on from there:
 *
 * - a call whose result is in the history is not made again;
 * - a tool call without a result is made again with the same key (so the same call id: a
 *   side-effecting tool acts once), unless redaction changed its recorded arguments;
 * - a peer message the interrupted run never got out is sent now;
 * - a model turn that was not recorded (the call was in flight) is asked for again.
 */
import type { MessageView } from '../bus/message.ts';
import type { IncomingReply } from '../listener/types.ts';
import {
  frameInvalidArguments,
  frameLocalRefusal,
  framePeerReply,
  frameSent,
  frameToolResult,
} from './frame.ts';
import type { AgentFunction } from './prompt.ts';
import {
  decodeLoose,
  decodeToolResult,
  decodeTurn,
  isTurnOf,
  type RecordedCall,
  TURN_KIND,
  type TurnRecord,
} from './record.ts';
import type { PendingPeer } from './state.ts';
import type { ChatMessage, ToolCallResult } from './types.ts';

const REPLY_KINDS = new Set(['response', 'huh', 'system-error']);

/** What the history says about a task. */
export interface Rebuilt {
  /** Messages after the first user message (which the loop frames itself), in order. */
  messages: ChatMessage[];
  turns: number;
  lastText: string;
  backend: string;
  /** The turn in progress: its calls, the answers found, the peers still to reply. */
  calls: RecordedCall[];
  results: Map<string, ToolCallResult>;
  pending: PendingPeer[];
  /** The last turn was a final answer (no calls). */
  final: TurnRecord | undefined;
  /** The agent has already answered the task. */
  answered: boolean;
  /** Peer messages of completed turns that never got out (the run that made them was cut off). */
  unsent: Array<{ target: string; args: Record<string, unknown> }>;
}

/** What a rebuild needs of the agent: its functions by name, and the bytes of a result shown. */
export interface RebuildOptions {
  functions: ReadonlyMap<string, AgentFunction>;
  resultBytes: number;
}

/** The task text of a task message's payload (`<NAME><task>...</task></NAME>`). */
export function taskOf(payload: string): string {
  const task = decodeLoose(payload).task;
  return typeof task === 'string' ? task : '';
}

/**
 * The message that brought the task `task` being delivered, and what the thread says of it. It is
 * the latest one to the agent, unless it is delivered again after a restart and another task was
 * refused as busy meanwhile: then the earlier one with that text that the agent had begun.
 * `rebuilt` is undefined for a task not begun (the usual case: it starts now).
 */
export function findDelivered(
  all: readonly MessageView[],
  agent: string,
  task: string,
  options: RebuildOptions,
): { at: number; rebuilt: Rebuilt | undefined } {
  const latest = lastTaskIndex(all, agent);
  if (latest < 0) return { at: latest, rebuilt: undefined };
  const rebuilt = rebuildTask(all, latest, agent, options);
  if (rebuilt || taskOf(all[latest]!.payload) === task) return { at: latest, rebuilt };
  for (let i = lastTaskIndex(all, agent, latest), tries = 0; i >= 0 && tries < 8; tries++) {
    if (taskOf(all[i]!.payload) === task) {
      const begun = rebuildTask(all, i, agent, options);
      return begun && !begun.answered ? { at: i, rebuilt: begun } : { at: latest, rebuilt: undefined };
    }
    i = lastTaskIndex(all, agent, i);
  }
  return { at: latest, rebuilt: undefined };
}

/**
 * The task a reply belongs to: the latest one before the reply that the agent began (a task
 * refused as busy has no turns), rebuilt without the replies still to be delivered after it.
 */
export function findReplied(
  all: readonly MessageView[],
  agent: string,
  from: string,
  reply: IncomingReply,
  options: RebuildOptions,
): { at: number; rebuilt: Rebuilt | undefined } {
  const upTo = replyIndex(all, agent, from, reply);
  let at = upTo < 0 ? all.length : upTo;
  for (let tries = 0; tries < 8; tries++) {
    at = lastTaskIndex(all, agent, at);
    if (at < 0) break;
    const rebuilt = rebuildTask(all, at, agent, options, upTo < 0 ? undefined : upTo);
    if (rebuilt) return { at, rebuilt };
  }
  return { at: -1, rebuilt: undefined };
}

/** Index of the message that gave `agent` its latest task (`to` it, kind message), or -1. */
export function lastTaskIndex(all: readonly MessageView[], agent: string, end = all.length): number {
  for (let i = end - 1; i >= 0; i--) {
    const m = all[i]!;
    if (m.to === agent && m.kind === 'message') return i;
  }
  return -1;
}

/** What `agent` had used in the thread by its last recorded turn (0 when it has none). */
export function recordedThreadTokens(all: readonly MessageView[], agent: string): number {
  for (let i = all.length - 1; i >= 0; i--) {
    const m = all[i]!;
    if (m.kind === TURN_KIND && isTurnOf(m, agent)) return decodeTurn(m.payload)?.threadTokens ?? 0;
  }
  return 0;
}

/**
 * The index of the record `reply` is (the latest one that matches), so a rebuild for it does not
 * also consume replies recorded after it that are still to be delivered. -1 when not found.
 */
export function replyIndex(
  all: readonly MessageView[],
  agent: string,
  from: string,
  reply: IncomingReply,
): number {
  for (let i = all.length - 1; i >= 0; i--) {
    const m = all[i]!;
    if (m.to !== agent || m.kind !== reply.kind || m.payload !== reply.xml) continue;
    if (reply.kind === 'response' && m.from !== from) continue;
    return i;
  }
  return -1;
}

/**
 * Rebuilds the task given at `all[taskIndex]` from the records after it. `replyAt`: the index of the
 * reply being delivered, when that is what resumes it. Undefined when the agent recorded no turn
 * for the task: it has not started.
 */
export function rebuildTask(
  all: readonly MessageView[],
  taskIndex: number,
  agent: string,
  { functions, resultBytes }: RebuildOptions,
  replyAt = Number.POSITIVE_INFINITY,
): Rebuilt | undefined {
  const task = all[taskIndex]!;
  const out: Rebuilt = {
    messages: [],
    turns: 0,
    lastText: '',
    backend: '',
    calls: [],
    results: new Map(),
    pending: [],
    final: undefined,
    answered: false,
    unsent: [],
  };
  // Peer messages asked for and not yet seen in the history, oldest first.
  let wanted: Array<{ call: RecordedCall; target: string; kind: 'ask' | 'tell'; open: boolean }> = [];
  let open = false;
  const close = () => {
    if (!open) return;
    for (const w of wanted) w.open = false;
    const results = out.calls.map(
      (c) =>
        out.results.get(c.id) ??
        (functions.get(c.name)?.kind === 'tell'
          ? frameSent(c.id, c.name, functions.get(c.name)!.target)
          : frameLocalRefusal(c.id, c.name, 'NoResult', 'no result was recorded for this call')),
    );
    out.messages.push({ role: 'tool', results });
    out.calls = [];
    out.results = new Map();
    out.pending = [];
    open = false;
  };
  let found = false;
  // Replies recorded after the one being delivered (`replyAt`) and after the task's last turn were
  // not yet delivered when the process stopped: they come on their own, and are not taken here.
  const turnPrefix = `${task.id}.turn-`;
  let lastTurn = -1;
  for (let i = all.length - 1; i > taskIndex && lastTurn < 0; i--) {
    if (all[i]!.id.startsWith(turnPrefix) && isTurnOf(all[i]!, agent)) lastTurn = i;
  }
  const replyLimit = Math.max(replyAt, lastTurn);
  for (let i = taskIndex + 1; i < all.length; i++) {
    const m = all[i]!;
    if (isTurnOf(m, agent)) {
      const turn = decodeTurn(m.payload);
      if (!turn || turn.task !== task.id) continue;
      found = true;
      close();
      out.turns = turn.turn;
      out.backend = turn.backend || out.backend;
      if (turn.text.trim() !== '') out.lastText = turn.text;
      if (turn.calls.length === 0) {
        out.final = turn;
        continue;
      }
      out.final = undefined;
      out.messages.push({ role: 'assistant', text: turn.text, toolCalls: turn.calls.map(stripKey) });
      out.calls = turn.calls;
      open = true;
      for (const call of turn.calls) {
        if (call.argsError !== undefined) {
          out.results.set(call.id, frameInvalidArguments(call.id, call.name, call.argsError));
          continue;
        }
        const fn = functions.get(call.name);
        if (fn && fn.kind !== 'tool') wanted.push({ call, target: fn.target, kind: fn.kind, open: true });
      }
      continue;
    }
    // Its answer (a `busy` one refused another task that came meanwhile, and is not this task's).
    if (m.kind === 'response' && m.from === agent) {
      if (!m.payload.includes('<status>busy</status>')) out.answered = true;
      continue;
    }
    if (!open) {
      if (m.kind === 'message' && m.from === agent) wanted = consume(wanted, m.to);
      continue;
    }
    if (m.kind === 'tool-result' && m.to === agent) {
      const call = out.calls.find((c) => m.id.endsWith(`.${c.key}.result`));
      if (!call || out.results.has(call.id)) continue;
      const source = functions.get(call.name)?.source ?? 'native';
      out.results.set(
        call.id,
        frameToolResult(call.id, call.name, decodeToolResult(m.payload, m.from), source, resultBytes),
      );
    } else if (m.kind === 'message' && m.from === agent) {
      const w = wanted.find((x) => x.target === m.to);
      if (!w) continue;
      wanted = wanted.filter((x) => x !== w);
      if (!w.open) continue;
      if (w.kind === 'tell') out.results.set(w.call.id, frameSent(w.call.id, w.call.name, w.target));
      else out.pending.push({ callId: w.call.id, peer: w.target });
    } else if (REPLY_KINDS.has(m.kind) && m.to === agent && out.pending.length > 0 && i <= replyLimit) {
      // As AgentLoop.reply: a response is the peer's own; <huh> and <SystemError> concern the oldest.
      const index = m.kind === 'response' ? out.pending.findIndex((p) => p.peer === m.from) : 0;
      if (index < 0) continue;
      const [pending] = out.pending.splice(index, 1);
      const call = out.calls.find((c) => c.id === pending!.callId)!;
      const reply: IncomingReply = {
        tag: rootTagOf(m.payload),
        kind: m.kind as IncomingReply['kind'],
        payload: decodeLoose(m.payload),
        xml: m.payload,
      };
      out.results.set(call.id, framePeerReply(call.id, call.name, pending!.peer, reply, resultBytes));
    }
  }
  if (!found) return undefined;
  // The open turn's unsent peer messages are sent by the loop as it finishes the turn; earlier ones here.
  out.unsent = wanted
    .filter((w) => !w.open && !w.call.redacted)
    .map((w) => ({ target: w.target, args: w.call.args ?? {} }));
  // A call of the open turn whose recorded arguments lost something to redaction cannot be repeated.
  for (const call of out.calls) {
    if (!call.redacted || out.results.has(call.id) || out.pending.some((p) => p.callId === call.id)) continue;
    out.results.set(
      call.id,
      frameLocalRefusal(
        call.id,
        call.name,
        'NotRepeated',
        `this call was cut off by a restart and its arguments held a secret the thread history does not keep, so it was not made again; make the call again if it is still needed`,
      ),
    );
  }
  return out;
}

function consume<T extends { target: string; open: boolean }>(wanted: T[], target: string): T[] {
  const index = wanted.findIndex((w) => w.target === target);
  return index < 0 ? wanted : wanted.filter((_, i) => i !== index);
}

function stripKey(call: RecordedCall) {
  const { key: _key, redacted: _redacted, ...request } = call;
  return request;
}

function rootTagOf(xml: string): string {
  return /^<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)/.exec(xml)?.[2] ?? '';
}
