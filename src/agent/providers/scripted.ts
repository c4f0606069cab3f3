/**
 * The scripted provider: a stand-in for a language model that plays a script of assistant turns
 * (text and tool calls), deterministically, with no network. Tests use it, and the default
 * organism falls back to it when no API key is set, so `npm start` runs an agent anywhere.
 *
 * A script file (YAML or JSON):
 *
 *   scripts:
 *     - when: 'regex matched against the task, case-insensitive; named groups become {{match.NAME}}'
 *       repeat: false          # true: the last turn repeats forever (for max_turns tests)
 *       turns:
 *         - tool_calls: [{ name: calculate, args: { expression: '{{match.expr}}' } }]
 *         - text: 'The answer is {{result.result}}.'
 *           on_error: { text: 'I could not: {{result.error.message}}' }   # when the last result failed
 *
 * The first script whose `when` matches (or that has none) plays. Which turn plays is read from the
 * conversation itself (assistant turns since the task), so the provider keeps no state: an agent
 * that resumes after a restart with turns 1 and 2 in its conversation gets turn 3 next.
 * `delay_ms` on a turn makes the model take that long to answer it (to test what happens to a model
 * call in flight).
 * Placeholders: {{task}}, {{match.NAME}}, {{result}} / {{result.a.b}} (the last tool or peer result
 * as data; refusals are {status, error: {code, message}}), {{results.N.a}} (the Nth result of the
 * last turn), {{all_results.N.a}} (the Nth result since the task). A string that is exactly one placeholder takes the value's type.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { LlmError } from '../../errors.ts';
import { abortableSleep } from '../options.ts';
import type { CompletionRequest, CompletionTurn, Provider, ToolCallResult } from '../types.ts';

export interface ScriptTurn {
  text?: string;
  /** Played instead of this turn when the last tool or peer result was a refusal or failure. */
  on_error?: ScriptTurn;
  tool_calls?: Array<{ name: string; args?: Record<string, unknown> }>;
  /** Tokens this turn reports; estimated from the text (4 characters a token) when absent. */
  usage?: { input?: number; output?: number };
  /** How long the model takes to give this turn, ms (aborted with the request). */
  delay_ms?: number;
}

export interface ScriptEntry {
  when?: string;
  repeat?: boolean;
  turns: ScriptTurn[];
}

export interface Script {
  /** Shown as the model name, e.g. `scripted/assistant-demo`. */
  name?: string;
  scripts: ScriptEntry[];
}

/** Played when organism.yaml names no script file. */
export const BUILTIN_SCRIPT: Script = {
  name: 'builtin',
  scripts: [
    {
      turns: [
        {
          text:
            'This is the scripted stand-in for a language model: no API key is set, so no real model ' +
            'was asked. Set ANTHROPIC_API_KEY, OPENAI_API_KEY or OLLAMA_URL to use one.',
        },
      ],
    },
  ],
};

export interface ScriptedOptions {
  /** A script object, or the path of a script file. Default BUILTIN_SCRIPT. */
  script?: Script | string;
  /** The model name it shows (organism.yaml `model`); default the script's `name`. */
  model?: string;
}

interface CompiledEntry {
  when: RegExp | undefined;
  repeat: boolean;
  turns: ScriptTurn[];
}

export function createScriptedProvider(options: ScriptedOptions = {}): Provider {
  const script =
    typeof options.script === 'string' ? loadScriptFile(options.script) : (options.script ?? BUILTIN_SCRIPT);
  const where = typeof options.script === 'string' ? options.script : 'script';
  const entries = compileScript(script, where);
  const model = options.model ?? script.name ?? 'script';
  return {
    kind: 'scripted',
    model,
    label: `scripted/${model}`,
    fingerprint: createHash('sha256').update(JSON.stringify(script)).digest('hex'),
    async complete(request: CompletionRequest, signal: AbortSignal): Promise<CompletionTurn> {
      if (signal.aborted) throw new LlmError('llm.aborted', 'scripted: the request was aborted');
      const { turn, delayMs } = playTurn(entries, request);
      if (delayMs > 0) {
        try {
          await abortableSleep(delayMs, signal);
        } catch {
          throw new LlmError('llm.aborted', 'scripted: the request was aborted');
        }
      }
      return turn;
    },
  };
}

/** Why the script file at `path` cannot be played (unreadable, not YAML, a bad entry), or undefined. */
export function scriptFileProblem(path: string): string | undefined {
  try {
    compileScript(loadScriptFile(path), path);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

export function loadScriptFile(path: string): Script {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new LlmError('llm.script', `cannot read the script ${path}: ${(error as Error).message}`);
  }
  try {
    return parseYaml(text) as Script;
  } catch (error) {
    throw new LlmError(
      'llm.script',
      `the script ${path} is not valid YAML or JSON: ${(error as Error).message}`,
    );
  }
}

function compileScript(script: Script, where: string): CompiledEntry[] {
  const bad = (path: string, what: string) => new LlmError('llm.script', `${where}: ${path}: ${what}`);
  if (!script || typeof script !== 'object' || !Array.isArray(script.scripts))
    throw bad('scripts', 'expected a list of scripts');
  return script.scripts.map((entry, i) => {
    const at = `scripts[${i}]`;
    if (!entry || typeof entry !== 'object') throw bad(at, 'expected a mapping with turns');
    let when: RegExp | undefined;
    if (entry.when !== undefined) {
      if (typeof entry.when !== 'string') throw bad(`${at}.when`, 'expected a regular expression as text');
      try {
        when = new RegExp(entry.when, 'is');
      } catch (error) {
        throw bad(`${at}.when`, (error as Error).message);
      }
    }
    if (!Array.isArray(entry.turns) || entry.turns.length === 0) throw bad(`${at}.turns`, 'expected turns');
    entry.turns.forEach((turn, j) => {
      const t = `${at}.turns[${j}]`;
      if (!turn || typeof turn !== 'object') throw bad(t, 'expected a mapping with text and/or tool_calls');
      if (turn.text !== undefined && typeof turn.text !== 'string') throw bad(`${t}.text`, 'expected text');
      if (turn.tool_calls !== undefined && !Array.isArray(turn.tool_calls))
        throw bad(`${t}.tool_calls`, 'expected a list');
      if (
        turn.delay_ms !== undefined &&
        (typeof turn.delay_ms !== 'number' || !Number.isFinite(turn.delay_ms) || turn.delay_ms < 0)
      )
        throw bad(`${t}.delay_ms`, 'expected a number of milliseconds, 0 or more');
      if (turn.on_error !== undefined && (typeof turn.on_error !== 'object' || turn.on_error === null))
        throw bad(`${t}.on_error`, 'expected a turn (text and/or tool_calls)');
      turn.tool_calls?.forEach((call, k) => {
        if (!call || typeof call.name !== 'string' || call.name === '')
          throw bad(`${t}.tool_calls[${k}].name`, 'expected the function name');
      });
    });
    return { when, repeat: entry.repeat === true, turns: entry.turns };
  });
}

function playTurn(
  entries: readonly CompiledEntry[],
  request: CompletionRequest,
): { turn: CompletionTurn; delayMs: number } {
  const messages = request.messages;
  const lastUser = findLastIndex(messages, (m) => m.role === 'user');
  const userText = lastUser >= 0 ? (messages[lastUser] as { content: string }).content : '';
  const task = taskText(userText);
  let match: RegExpExecArray | null = null;
  const entry = entries.find((e) => {
    if (!e.when) return true;
    match = e.when.exec(task);
    return match !== null;
  });
  const input = estimate(request.system) + messages.reduce((n, m) => n + estimate(JSON.stringify(m)), 0);
  if (!entry) {
    const text = 'The scripted provider has no script for this task.';
    return {
      turn: { text, toolCalls: [], usage: { input, output: estimate(text) }, stopReason: 'end_turn' },
      delayMs: 0,
    };
  }
  const played = messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length;
  const index = entry.repeat ? Math.min(played, entry.turns.length - 1) : played;
  const lastTool = findLastIndex(messages, (m) => m.role === 'tool');
  const results = lastTool > lastUser ? (messages[lastTool] as { results: ToolCallResult[] }).results : [];
  const planned = entry.turns[index];
  const failed = results.length > 0 && results[results.length - 1]!.isError;
  const turn = failed && planned?.on_error ? planned.on_error : planned;
  if (!turn) {
    const text = '(the script has no more turns)';
    return {
      turn: { text, toolCalls: [], usage: { input, output: estimate(text) }, stopReason: 'end_turn' },
      delayMs: 0,
    };
  }
  const vars = {
    task,
    match: (match as RegExpExecArray | null)?.groups ?? {},
    result: results.length > 0 ? results[results.length - 1]!.data : undefined,
    results: results.map((r) => r.data),
    all_results: messages
      .slice(lastUser + 1)
      .flatMap((m) => (m.role === 'tool' ? m.results.map((r) => r.data) : [])),
  };
  const text = turn.text === undefined ? '' : String(fill(turn.text, vars));
  const toolCalls = (turn.tool_calls ?? []).map((call, k) => ({
    id: `script_${played}_${k}`,
    name: call.name,
    args: (fill(call.args ?? {}, vars) ?? {}) as Record<string, unknown>,
  }));
  const output = turn.usage?.output ?? estimate(text) + estimate(JSON.stringify(toolCalls));
  return {
    turn: {
      text,
      toolCalls,
      usage: { input: turn.usage?.input ?? input, output },
      stopReason: toolCalls.length > 0 ? 'tool_use' : 'end_turn',
    },
    delayMs: turn.delay_ms ?? 0,
  };
}

/** The text of the last `<task>` element the loop framed, else the whole message. */
function taskText(content: string): string {
  const all = [...content.matchAll(/<task\b[^>]*>([\s\S]*?)<\/task>/g)];
  const last = all[all.length - 1];
  return (last ? last[1]! : content).trim();
}

const PLACEHOLDER = /\{\{\s*([\w.]+)\s*\}\}/g;

function fill(value: unknown, vars: Record<string, unknown>): unknown {
  if (typeof value === 'string') {
    const whole = /^\{\{\s*([\w.]+)\s*\}\}$/.exec(value);
    if (whole) return lookup(vars, whole[1]!);
    return value.replace(PLACEHOLDER, (_, path: string) => show(lookup(vars, path)));
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, vars));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, vars)]));
  return value;
}

function lookup(vars: Record<string, unknown>, path: string): unknown {
  let current: unknown = vars;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function show(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function estimate(text: string): number {
  return Math.ceil(text.length / 4);
}

function findLastIndex<T>(list: readonly T[], test: (item: T) => boolean): number {
  for (let i = list.length - 1; i >= 0; i--) if (test(list[i]!)) return i;
  return -1;
}
