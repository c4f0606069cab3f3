/**
 * The contract between the tools that start programs (run_command) and the OS boundary around them.
 * A sandbox does not run anything itself: it turns "run this argv here, seeing this" into the argv,
 * working directory and environment to spawn, so the caller keeps one spawn path (timeouts, output
 * caps, killing the group) whatever the sandbox.
 */

/** `tool_config.run_command.sandbox`. */
export type SandboxKind = 'bubblewrap' | 'none';

export interface SandboxLimits {
  /** Processes the program may have at once, itself included. */
  maxProcesses: number;
  /** Memory each process may use (RLIMIT_DATA), and the size of the private /tmp, in MiB. */
  maxMemoryMb: number;
}

/** One program to start, as the tool built it, and what it may see. */
export interface SandboxRequest {
  /** Program and arguments; argv[0] is looked up on env.PATH inside. */
  argv: readonly string[];
  /** Absolute working directory, inside `workspace`. */
  cwd: string;
  /** Absolute path of the only folder the program may write. */
  workspace: string;
  /**
   * Absolute paths the program must not see at all (data dir, the config's folder, key files...).
   * Missing ones are skipped. A hidden folder that holds the workspace stays hidden around it.
   */
  hide: readonly string[];
  /**
   * Absolute paths brought back read-only where a cover (or the private /tmp) took them away: the
   * program's own files and the modules it loads (programReadOnlyPaths). Each is shown at the path
   * given. Refused with `sandbox.bad_request` when one is, or holds, a hidden path.
   */
  readOnly?: readonly string[];
  /**
   * Names of the daemon's environment variables the program gets (tool_config's env_allowlist,
   * already checked); the sandbox adds its own PATH, HOME and LANG.
   */
  envAllowlist: readonly string[];
  /** Where the allowlisted values come from; default process.env. */
  from?: NodeJS.ProcessEnv;
  /** Whether the program may open network connections. */
  network: boolean;
  limits: SandboxLimits;
}

/** What to spawn. */
export interface SpawnPlan {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface Sandbox {
  readonly kind: SandboxKind;
  /** Why programs cannot be started in this sandbox here, with how to fix it; null when they can. */
  unavailable(): string | null;
  /** The spawn plan for `request`. Throws SandboxError when the request cannot be confined. */
  plan(request: SandboxRequest): SpawnPlan;
}
