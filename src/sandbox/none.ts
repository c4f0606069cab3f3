/**
 * `sandbox: none`: the program runs as the daemon's user, seeing everything the daemon sees (its
 * data dir, config, /proc/<daemon pid>/environ); only the guards and the reduced environment stand
 * in the way. It must be chosen explicitly, and the daemon warns about it at start.
 */
import { hostEnv } from './env.ts';
import { closeInheritedFds } from './fds.ts';
import type { Sandbox, SandboxRequest, SpawnPlan } from './types.ts';

export class NoSandbox implements Sandbox {
  readonly kind = 'none' as const;

  unavailable(): string | null {
    return null;
  }

  plan(request: SandboxRequest): SpawnPlan {
    // Unconfined, but still no door the launcher left open (fds.ts).
    closeInheritedFds();
    return { argv: [...request.argv], cwd: request.cwd, env: hostEnv(request.envAllowlist, request.from) };
  }
}
