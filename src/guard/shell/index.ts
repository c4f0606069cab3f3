/**
 * The shell guard: judges a run_command command line before it runs. The line is tokenized and
 * parsed (tokenizer.ts, parse.ts), every command that would run is found (analyze.ts), and each is
 * matched against the rule catalog (rules/). Trust decides what a match means (types.ts
 * `verdictFor`); at low trust, anything outside the known-safe set (safe.ts) is denied too.
 */

import path from 'node:path';
import type { ToolConfig, TrustLevel } from '../../config/types.ts';
import { ShellParseError } from '../../errors.ts';
import { allow, deny, type Severity, type Verdict, type VerdictKind, verdictFor } from '../types.ts';
import { analyze, MissingScriptError } from './analyze.ts';
import { blockedNames, blockedRefusal, UNJUDGEABLE_RULE, UNJUDGEABLE_SUGGESTION } from './blocked.ts';
import type { Cmd } from './cmd.ts';
import { NO_ENV, type ShellEnv } from './paths.ts';
import { RAW_RULES, rulesFor } from './rules/index.ts';
import { commandPrefixes, isKnownSafe, writesFiles } from './safe.ts';
import { SHELLS, WRAPPERS } from './wrappers.ts';

/** Longest command line judged, in UTF-8 bytes. Longer ones are denied: nobody reviews 8 KiB of shell. */
export const MAX_COMMAND_BYTES = 8192;

const PARSE_RULES: Record<ShellParseError['code'] & string, string> = {
  'guard.shell_unbalanced': 'shell.parse.unbalanced',
  'guard.shell_too_long': 'shell.parse.too_long',
  'guard.shell_too_deep': 'shell.parse.too_deep',
};

/** Where the command will run; with it, relative paths, globs and trees are judged against the disk. */
export interface ShellPlace {
  /** Absolute workspace path. */
  workspace: string;
  /** run_command's `cwd`, relative to the workspace (default: the workspace). */
  cwd?: string;
}

export function checkShell(
  command: string,
  trust: TrustLevel,
  toolConfig?: ToolConfig,
  place?: ShellPlace,
): Verdict {
  if (typeof command !== 'string' || command.trim() === '') {
    return deny(
      'shell.parse.empty',
      'The command is empty.',
      'Give the command line to run as a non-empty string.',
    );
  }
  if (command.length > MAX_COMMAND_BYTES || Buffer.byteLength(command, 'utf8') > MAX_COMMAND_BYTES) {
    return deny(
      'shell.parse.too_long',
      `The command is longer than ${MAX_COMMAND_BYTES} bytes.`,
      'Put long scripts in a file inside the workspace and run the file.',
    );
  }
  if (command.includes('\0')) {
    return deny(
      'shell.parse.unbalanced',
      'The command contains a NUL byte.',
      'Remove control characters from the command.',
    );
  }
  let cmds: Cmd[];
  let sources: string[];
  try {
    ({ cmds, sources } = analyze(command, shellEnv(toolConfig, place)));
  } catch (error) {
    if (!(error instanceof ShellParseError)) throw error;
    if (error instanceof MissingScriptError) {
      return deny(
        'shell.parse.missing_script',
        `The command cannot be checked: ${error.message}.`,
        'Give the shell its script: bash -c "the commands", or run the commands directly.',
      );
    }
    return deny(
      PARSE_RULES[error.code] ?? 'shell.parse.unbalanced',
      `The command cannot be checked: ${error.message}.`,
      error.code === 'guard.shell_too_deep'
        ? 'Flatten the command: fewer nested $(...), subshells and sh -c levels.'
        : 'Close every quote, $( and backtick, or put the script in a file and run the file.',
    );
  }

  for (const rule of RAW_RULES) {
    for (const source of sources) {
      const m = rule.pattern.exec(source);
      if (m && verdictFor(rule.severity, trust) === 'deny')
        return deny(rule.id, rule.reason, rule.suggestion, m[0]);
    }
  }

  const config = shellConfig(toolConfig);
  // The strictest verdict wins; between equal verdicts the graver rule (so a low-trust deny names
  // curl | sh rather than a lesser match), then the first in command and catalog order.
  let best = allow();
  let bestRank = -1;
  const refused = blockedRefusal(cmds, config.blocked);
  if (refused) {
    return deny(
      refused.rule_id,
      refused.reason,
      refused.rule_id === UNJUDGEABLE_RULE
        ? UNJUDGEABLE_SUGGESTION
        : 'Use another command, or ask for the tool_config to change.',
      refused.segment,
    );
  }
  for (const cmd of cmds) {
    for (const rule of rulesFor(cmd)) {
      if (!rule.match(cmd)) continue;
      const kind = verdictFor(rule.severity, trust);
      if (kind === 'allow') continue;
      const v: Verdict = {
        verdict: kind,
        rule_id: rule.id,
        reason: rule.reason,
        suggestion: rule.suggestion,
        segment: cmd.segment,
      };
      if (rule.severity === 'catastrophic') return v;
      const rank = VERDICT_RANK[kind] * 10 + SEVERITY_RANK[rule.severity];
      if (rank > bestRank) {
        best = v;
        bestRank = rank;
      }
    }
  }
  if (best.verdict === 'deny') return best;
  if (trust === 'low') {
    const refused = lowTrustRefusal(cmds, config.allowed);
    if (refused) return refused;
  }
  return best;
}

function shellEnv(toolConfig: ToolConfig | undefined, place: ShellPlace | undefined): ShellEnv {
  const expand = toolConfig?.shell === true;
  if (!place || typeof place.workspace !== 'string' || !path.isAbsolute(place.workspace))
    return expand ? { ...NO_ENV, expand } : NO_ENV;
  const workspace = path.resolve(place.workspace);
  const cwd = typeof place.cwd === 'string' ? path.resolve(workspace, place.cwd) : workspace;
  return { workspace, cwd, expand };
}

const VERDICT_RANK: Record<VerdictKind, number> = { allow: 0, warn: 1, deny: 2 };
const SEVERITY_RANK: Record<Severity, number> = { risky: 0, destructive: 1, catastrophic: 2 };

const ELEVATING = new Set(
  Object.entries(WRAPPERS)
    .filter(([, s]) => s.elevates || s.remote)
    .map(([n]) => n)
    .concat('su'),
);

/** At low trust, the first command outside the known-safe set, or writing a file, is refused. */
function lowTrustRefusal(cmds: Cmd[], allowed: readonly (readonly string[])[]): Verdict | null {
  for (const cmd of cmds) {
    const wrapper = cmd.wrappers.find((w) => ELEVATING.has(w));
    if (wrapper) {
      return deny(
        'shell.trust.not_allowlisted',
        `At low trust, commands may not run through ${wrapper}.`,
        'Run read-only commands directly, without changing user or host.',
        cmd.segment,
      );
    }
    // A shell given -c or eval of literal text: its own commands are judged one by one.
    const container = cmd.inlineScript && (SHELLS.has(cmd.name) || cmd.name === 'eval');
    if (!container && !isKnownSafe(cmd, allowed)) {
      const what = cmd.dynamicName ? 'a command built at run time' : `'${cmd.name}'`;
      return deny(
        'shell.trust.not_allowlisted',
        `At low trust only known read-only commands run, and ${what} is not one of them.`,
        'Use read-only commands (ls, cat, grep, head, git status/log/diff...), or ask for a higher trust level or allowed_commands.',
        cmd.segment,
      );
    }
    if (writesFiles(cmd)) {
      return deny(
        'shell.trust.not_allowlisted',
        'At low trust commands may not write files by redirection.',
        'Print the output instead of redirecting it to a file.',
        cmd.segment,
      );
    }
  }
  return null;
}

interface ShellConfig {
  /** allowed_commands as argv prefixes: at low trust they count as known-safe (rules still apply). */
  allowed: readonly (readonly string[])[];
  /**
   * blocked_commands: program names (basename) denied at every trust level; while set, a command
   * whose name is built at run time is denied too (blocked.ts).
   */
  blocked: ReadonlySet<string>;
}

const EMPTY: ShellConfig = { allowed: [], blocked: new Set() };

/** run_command's own tool_config keys, read the way the tool reads them (see its README section). */
function shellConfig(config: ToolConfig | undefined): ShellConfig {
  if (!config) return EMPTY;
  const names = (v: unknown) =>
    new Set(Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  if (config.allowed_commands === undefined && config.blocked_commands === undefined) return EMPTY;
  const blocked = blockedNames([...names(config.blocked_commands)]);
  return { allowed: commandPrefixes(config.allowed_commands), blocked };
}
