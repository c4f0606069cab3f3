/** The OS boundary for programs the runtime starts: one interface, its implementations side by side. */
export { BubblewrapSandbox } from './bubblewrap.ts';
export { envAllowlistProblem, hostEnv, sandboxEnv, secretNamePart } from './env.ts';
export { type ClosedFd, closeInheritedFds } from './fds.ts';
export { NoSandbox } from './none.ts';
export {
  type BubblewrapOptions,
  defaultBubblewrapOptions,
  SANDBOX_CONFIG_DEFAULTS,
  SANDBOX_KINDS,
} from './options.ts';
export { clearProbeCache, probeBubblewrap } from './probe.ts';
export { programReadOnlyPaths } from './program-paths.ts';
export type { Sandbox, SandboxKind, SandboxLimits, SandboxRequest, SpawnPlan } from './types.ts';
export { findProgram } from './which.ts';

import { BubblewrapSandbox } from './bubblewrap.ts';
import { NoSandbox } from './none.ts';
import type { Sandbox, SandboxKind } from './types.ts';

const shared = new Map<string, Sandbox>();

/**
 * The sandbox of `kind`, one per kind and bwrap binary for the process, so its probe runs once.
 * `env` is read for ORGANISM_BWRAP (default process.env).
 */
export function sandboxFor(kind: SandboxKind, env: NodeJS.ProcessEnv = process.env): Sandbox {
  const key = kind === 'none' ? 'none' : `bubblewrap:${env.ORGANISM_BWRAP ?? ''}`;
  let sandbox = shared.get(key);
  if (!sandbox) {
    sandbox =
      kind === 'none'
        ? new NoSandbox()
        : new BubblewrapSandbox(env.ORGANISM_BWRAP ? { binary: env.ORGANISM_BWRAP } : {});
    shared.set(key, sandbox);
  }
  return sandbox;
}
