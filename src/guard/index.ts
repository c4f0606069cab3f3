/**
 * Policy entry point: `checkCall(kind, input)` judges one tool call with the guard its tool
 * declares (`ToolDefinition.guard`). Synchronous, no network, no tool runs: the web guard here is
 * the static check; fetch_url / webhook call `resolveAndCheck` themselves when they connect.
 */
import type { GuardKind } from '../tools/types.ts';
import { checkEmail, type EmailArgs } from './email.ts';
import { type Access, checkPath, type PathCheckInput } from './file.ts';
import { checkShell } from './shell/index.ts';
import { deny, type GuardInput, stricter, type Verdict } from './types.ts';
import { checkUrlStatic } from './web.ts';

export type { EmailArgs } from './email.ts';
export { checkEmail, recipientMatches } from './email.ts';
export type { Access, PathCheckInput, PathVerdict } from './file.ts';
export { checkPath } from './file.ts';
export { checkShell, MAX_COMMAND_BYTES } from './shell/index.ts';
export type { GuardInput, Severity, Verdict, VerdictKind } from './types.ts';
export type { CheckedTarget, Lookup, ResolvedAddress } from './web.ts';
export { checkUrlStatic, domainMatches, RISKY_PORTS, resolveAndCheck } from './web.ts';

/** The guard of each native tool, for callers that know a tool only by name (`organism guard check`). */
export const TOOL_GUARDS: Readonly<Record<string, GuardKind>> = {
  run_command: 'shell',
  read_file: 'file',
  list_dir: 'file',
  write_file: 'file',
  fetch_url: 'web',
  webhook: 'web',
  send_email: 'email',
};

/** File tools that change what is on disk; every other file tool reads. */
const WRITING_TOOL = /^(write|append|delete|remove|move|rename|edit|create|mkdir|copy)(_|$)/;

export function checkCall(kind: GuardKind, input: GuardInput): Verdict {
  const args = input.args ?? {};
  switch (kind) {
    case 'shell': {
      const command = args.command;
      if (typeof command !== 'string') {
        return deny(
          'shell.parse.empty',
          'args.command must be the command line, as a string.',
          'Pass { "command": "..." }.',
        );
      }
      const keys = ['cwd', 'working_dir', 'workdir'] as const;
      const cwd = keys.map((k) => args[k]).find((d): d is string => typeof d === 'string');
      let verdict = checkShell(command, input.trust, input.toolConfig, {
        workspace: input.workspace,
        ...(cwd === undefined ? {} : { cwd }),
      });
      // run_command may take a working directory; it must be a place the file guard lets us read.
      for (const key of keys) {
        const dir = args[key];
        if (typeof dir === 'string' && verdict.verdict !== 'deny') {
          const { resolved: _resolved, ...v } = checkPath(dir, 'read', pathInput(input));
          verdict = stricter(verdict, v);
        }
      }
      return verdict;
    }
    case 'file': {
      const access: Access = WRITING_TOOL.test(input.tool) ? 'write' : 'read';
      const paths = ['path', 'source', 'destination', 'from', 'to', 'target'].filter(
        (k) => args[k] !== undefined,
      );
      if (paths.length === 0) {
        return deny(
          'file.invalid_path',
          'args.path is missing.',
          'Pass { "path": "relative/to/workspace" }.',
        );
      }
      let verdict: Verdict | null = null;
      for (const key of paths) {
        const value = args[key];
        if (typeof value !== 'string')
          return deny('file.invalid_path', `args.${key} must be a string path.`, 'Pass paths as strings.');
        const { resolved: _resolved, ...v } = checkPath(
          value,
          key === 'source' || key === 'from' ? 'read' : access,
          pathInput(input),
        );
        verdict = verdict === null ? v : stricter(verdict, v);
        if (verdict.verdict === 'deny') return verdict;
      }
      return verdict!;
    }
    case 'web': {
      const url = args.url;
      if (typeof url !== 'string')
        return deny('web.invalid_url', 'args.url must be a string.', 'Pass { "url": "https://..." }.');
      return checkUrlStatic(url, input.toolConfig);
    }
    case 'email':
      return checkEmail(args as EmailArgs, input.toolConfig);
    default:
      return deny('guard.unknown_kind', `There is no guard called ${JSON.stringify(kind)}.`, null);
  }
}

function pathInput(input: GuardInput): PathCheckInput {
  const allowed = input.toolConfig?.allowed_paths;
  return {
    workspace: input.workspace,
    trust: input.trust,
    ...(Array.isArray(allowed)
      ? { allowedPaths: allowed.filter((g): g is string => typeof g === 'string') }
      : {}),
  };
}
