/**
 * env_allowlist as run_command reads it at call time. The rule itself (which names look like
 * secrets) and the environments built from the list live in src/sandbox/env.ts, shared with
 * `organism validate` and the daemon's start, which refuse the same names earlier.
 */
import { CommandError } from '../../src/errors.ts';
import { envAllowlistProblem } from '../../src/sandbox/env.ts';

/** Checks tool_config.env_allowlist; throws command.bad_config naming the offending entry. */
export function checkEnvAllowlist(names: readonly unknown[]): string[] {
  return names.map((name, i) => {
    const problem = envAllowlistProblem(name);
    if (problem !== null) {
      throw new CommandError('command.bad_config', `tool_config.env_allowlist[${i}] ${problem}`);
    }
    return name as string;
  });
}
