/**
 * `organism guard check`: judges tool calls read as JSON lines on stdin, one verdict line out per
 * case, without running any tool or touching the network (the web guard's static check only; DNS
 * checks happen when a call really runs). For users trying a policy and for corpus tests.
 */
import path from 'node:path';
import type { ToolConfig, TrustLevel } from '../../config/types.ts';
import { UsageError } from '../../errors.ts';
import { checkCall, TOOL_GUARDS } from '../../guard/index.ts';
import { loadNativeTools } from '../../tools/catalog.ts';
import { compileSchema } from '../../tools/schema.ts';
import type { GuardKind } from '../../tools/types.ts';
import type { CommandIo } from '../io.ts';

export const summary = 'check tool calls against the guards: JSON lines in, verdicts out';

const USAGE = `usage: organism guard check < cases.jsonl

Reads one case per line on stdin:
  {"tool": "run_command", "args": {"command": "rm -rf /"}, "trust": "medium",
   "tool_config": {}, "workspace": "/abs/dir"}
and prints one verdict per line:
  {"verdict": "deny", "rule_id": "shell.filesystem.rm_root", "reason": "...", "suggestion": "..."}

tool        run_command, read_file, list_dir, write_file, fetch_url, webhook, send_email;
            any other tool needs "guard": "shell" | "file" | "web" | "email"
trust       low | medium | high (default medium)
tool_config that tool's tool_config (allowed_paths, allowed_domains, allowed_recipients, ...)
workspace   absolute path (default: the current directory)

No tool runs and no network is used. A line that cannot be read prints {"error": "..."}.
Exit 0 when every line was read, 1 otherwise.

examples:
  echo '{"tool": "read_file", "args": {"path": "/etc/shadow"}}' | npx organism guard check
  npx organism guard check < cases.jsonl > verdicts.jsonl`;

const TRUST: readonly TrustLevel[] = ['low', 'medium', 'high'];
const KINDS: readonly GuardKind[] = ['shell', 'file', 'web', 'email'];
const KEYS = new Set(['tool', 'args', 'trust', 'tool_config', 'workspace', 'guard']);

export async function run(argv: string[], io: CommandIo): Promise<number> {
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    io.out(USAGE);
    return argv.length === 0 ? 1 : 0;
  }
  if (argv[0] !== 'check') throw new UsageError(`unknown subcommand '${argv[0]}'; the only one is 'check'`);
  if (argv.length > 1)
    throw new UsageError(
      `'guard check' takes no arguments (got ${argv.slice(1).join(' ')}); cases come on stdin`,
    );

  let line = 0;
  let failed = false;
  const defaults = new ArgDefaults();
  for await (const text of io.stdinLines()) {
    line++;
    if (text.trim() === '') continue;
    const result = await judge(text, line, defaults);
    if ('error' in result) failed = true;
    io.out(JSON.stringify(result));
  }
  return failed ? 1 : 0;
}

type Output =
  | { verdict: string; rule_id: string | null; reason: string | null; suggestion: string | null }
  | { error: string };

/**
 * A real call has its arguments' schema defaults filled in before the guard judges it (list_dir's
 * `path: "."`); so does a case here, for the native tools, or the two would disagree. The tools'
 * schemas are loaded at the first case that names one.
 */
class ArgDefaults {
  #validators: Promise<Map<string, (args: unknown) => unknown>> | undefined;

  async apply(tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (!Object.hasOwn(TOOL_GUARDS, tool)) return args;
    this.#validators ??= loadNativeTools().then(
      (tools) => new Map(tools.map((t) => [t.name, compileSchema(t.args)] as const)),
    );
    const validate = (await this.#validators).get(tool);
    if (!validate) return args;
    const filled = structuredClone(args);
    // Run for its defaults only: arguments the schema refuses are still judged as given.
    validate(filled);
    return filled;
  }
}

async function judge(text: string, line: number, defaults: ArgDefaults): Promise<Output> {
  const fail = (message: string): Output => ({ error: `line ${line}: ${message}` });
  let c: unknown;
  try {
    c = JSON.parse(text);
  } catch (error) {
    return fail(`not valid JSON (${(error as Error).message})`);
  }
  if (c === null || typeof c !== 'object' || Array.isArray(c)) return fail('a case must be a JSON object');
  const o = c as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !KEYS.has(k));
  if (unknown.length > 0)
    return fail(`unknown key ${JSON.stringify(unknown[0])}; expected ${[...KEYS].join(', ')}`);
  if (typeof o.tool !== 'string' || o.tool === '')
    return fail('"tool" must be a tool name such as "run_command"');
  if (o.args === null || typeof o.args !== 'object' || Array.isArray(o.args))
    return fail('"args" must be an object of the tool\'s arguments');
  const trust = o.trust ?? 'medium';
  if (!TRUST.includes(trust as TrustLevel))
    return fail(`"trust" must be one of ${TRUST.join(', ')}, not ${JSON.stringify(trust)}`);
  const config = o.tool_config ?? {};
  if (config === null || typeof config !== 'object' || Array.isArray(config))
    return fail('"tool_config" must be an object');
  const workspace = o.workspace ?? process.cwd();
  if (typeof workspace !== 'string' || !path.isAbsolute(workspace))
    return fail('"workspace" must be an absolute path');
  let kind: GuardKind | undefined = TOOL_GUARDS[o.tool];
  if (o.guard !== undefined) {
    if (!KINDS.includes(o.guard as GuardKind)) return fail(`"guard" must be one of ${KINDS.join(', ')}`);
    kind = o.guard as GuardKind;
  }
  if (kind === undefined) {
    return fail(
      `no guard is known for tool ${JSON.stringify(o.tool)}; use one of ${Object.keys(TOOL_GUARDS).join(', ')}, or give "guard"`,
    );
  }
  const v = checkCall(kind, {
    tool: o.tool,
    args: await defaults.apply(o.tool, o.args as Record<string, unknown>),
    trust: trust as TrustLevel,
    toolConfig: config as ToolConfig,
    workspace,
  });
  return { verdict: v.verdict, rule_id: v.rule_id, reason: v.reason, suggestion: v.suggestion };
}
