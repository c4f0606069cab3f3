/**
 * What a program the runtime starts gets of the environment: names from its tool_config's
 * env_allowlist, never one that looks like a secret, plus a PATH, HOME and LANG the runtime sets.
 * The secret-name rule is here so `organism validate`, the daemon's start and the call itself all
 * apply the same one.
 */
import type { BubblewrapOptions } from './options.ts';

/**
 * Names that look like credentials: SECRET, PASSWORD, PASSWD, TOKEN, KEY or CREDENTIAL anywhere in
 * the name, in any letter case (FAKESECRET, MYPASSWORD, DB_PASSWORDS, OPENAI_API_KEY), or PASS,
 * COOKIE or AUTH as a whole `_`-separated part (SSH_AUTH_SOCK, but not GIT_AUTHOR_NAME).
 */
const SECRET_SUBSTRING = /SECRET|PASSWORD|PASSWD|TOKEN|KEY|CREDENTIAL/i;
const SECRET_PART = /(^|_)(PASS|COOKIE|AUTH)(_|$)/i;

/** The part of `name` that makes it look like a secret, or null when it does not. */
export function secretNamePart(name: string): string | null {
  const match = SECRET_SUBSTRING.exec(name) ?? SECRET_PART.exec(name);
  if (!match) return null;
  return (match[2] ?? match[0]).toUpperCase();
}

/** Why `name` may not be in an env_allowlist, or null when it may. */
export function envAllowlistProblem(name: unknown): string | null {
  if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    return 'is not an environment variable name (letters, digits, _)';
  }
  const part = secretNamePart(name);
  if (part === null) return null;
  return (
    `(${name}) looks like a secret (it contains ${part}); run_command never passes secrets to a ` +
    'program, because its output reaches agents, thread history and logs: remove it'
  );
}

/** The environment inside the bubblewrap sandbox: PATH, HOME, LANG set here, then the allowlist. */
export function sandboxEnv(
  allowlist: readonly string[],
  options: Pick<BubblewrapOptions, 'path' | 'home' | 'lang'>,
  from: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of allowlist) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH = options.path;
  env.HOME = options.home;
  env.LANG = options.lang;
  return env;
}

/** Taken from the daemon's environment as they are when the program runs unsandboxed. */
export const HOST_ENV_BASE = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TERM'] as const;

/** The environment with no sandbox: the base names and the allowlist, taken from `from`. */
export function hostEnv(
  allowlist: readonly string[],
  from: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of [...HOST_ENV_BASE, ...allowlist]) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  // With no PATH at all spawn would find nothing; a minimal one keeps `ls` working.
  if (env.PATH === undefined) env.PATH = '/usr/local/bin:/usr/bin:/bin';
  return env;
}
