/**
 * The environment a child process gets: only allowlisted names, never the daemon's whole
 * environment, so API keys and passwords the daemon holds do not reach a command (invariant 7).
 */
import { CommandError } from '../../src/errors.ts';

/** Always passed through when the daemon has them. */
export const BASE_ENV_ALLOWLIST = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TERM'] as const;

/**
 * Names that look like credentials (a whole `_`-separated part: OPENAI_API_KEY, GITHUB_TOKEN,
 * SSH_AUTH_SOCK, but not GIT_AUTHOR_NAME); refused in env_allowlist so a config slip cannot leak one.
 */
const SECRET_NAME = /(^|_)(API_?KEY|KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASS|CREDENTIALS?|COOKIE|AUTH)(_|$)/i;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks tool_config.env_allowlist; throws command.bad_config naming the offending entry. */
export function checkEnvAllowlist(names: readonly unknown[]): string[] {
  return names.map((name, i) => {
    if (typeof name !== 'string' || !ENV_NAME.test(name)) {
      throw new CommandError(
        'command.bad_config',
        `tool_config.env_allowlist[${i}] is not an environment variable name (letters, digits, _)`,
      );
    }
    if (SECRET_NAME.test(name)) {
      throw new CommandError(
        'command.bad_config',
        `tool_config.env_allowlist[${i}] (${name}) looks like a credential; run_command never passes ` +
          'secrets to a command, because its output reaches agents and logs',
      );
    }
    return name;
  });
}

/** The child's environment: the base names plus `extra`, taken from `from` when set there. */
export function buildChildEnv(
  extra: readonly string[],
  from: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of [...BASE_ENV_ALLOWLIST, ...extra]) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  // With no PATH at all spawn would find nothing; a minimal one keeps `ls` working.
  if (env.PATH === undefined) env.PATH = '/usr/local/bin:/usr/bin:/bin';
  return env;
}
