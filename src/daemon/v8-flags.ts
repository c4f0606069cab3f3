/**
 * The V8 flags a daemon runs with: what `organism.optimize_for` chooses between.
 *
 * bin/organism.js sets the memory flags first thing, in the process rather than in a shebang, so
 * `organism run`, `npx organism run`, `npm start` and `node bin/organism.js run` run alike; V8 reads
 * them as it goes, so they take effect set after start (bench/daemon.ts measures the result). With
 * `optimize_for: speed` the daemon turns the speed-costly ones back to V8's defaults once it has
 * read organism.yaml, before the bus carries its first message: the code that stays hot (the bus,
 * the XML codec, the Redis transport) first runs after that and is compiled for speed. Either way,
 * once its port is open the daemon tiers up as V8 does (runningV8Flags): the later tier-up is for
 * start-up code only.
 *
 * This module imports nothing of Organism's: bin/organism.js loads it before everything else.
 */
import { setFlagsFromString } from 'node:v8';

export type OptimizeFor = 'memory' | 'speed';

/**
 * How much later than V8's default a function is optimized under `memory`: start-up code (the
 * YAML parser, module loading, ajv compiling listeners' payload schemas) runs warm but not for
 * long, and optimizing it cost ~5 MB of idle RSS (compiler memory kept by the allocator of the
 * compiler's threads) and start time on a busy machine.
 */
const LATER = 8;

/** V8's own tier-up thresholds (unchanged from 11.8 through 13.6, Node 24), and 11.3's budget (Node 20). */
const MAGLEV_CALLS = 400;
const TURBOFAN_CALLS = 3000;
const INTERRUPT_BUDGET = 67584;

/**
 * The flags for `target` on V8 `version` (process.versions.v8). V8 11.3 (Node 20) counts bytecode
 * run before it optimizes (--interrupt-budget); 11.8 and later (Node 21+) removed that flag for
 * invocation counts per tier: an unknown flag is an error line on stderr at every start, so each V8
 * gets its own.
 */
export function v8FlagsFor(target: OptimizeFor, version: string = process.versions.v8): string[] {
  const tierUp = tierUpFlags(target === 'memory' ? LATER : 1, version);
  return [
    // A young generation that does not grow past V8's initial size keeps a long-running daemon's
    // idle RSS ~20 MB lower (start-up otherwise grows it to 32 MB, which stays committed while
    // idle). Under load it costs speed: kept small, it is collected four to eight times as
    // often, and two bench daemons on Redis spent 12.5 % of their CPU in the collector against
    // 9.5 % with V8's own growth (to 16 MB a semi-space) and ~6 % more CPU a message.
    target === 'memory' ? '--semi-space-growth-factor=1' : '--semi-space-growth-factor=2',
    // V8's memory-over-speed trade-offs: set at start, ~8 MB off the idle daemon; with the later
    // tier-up, about 1.8x the CPU a message costs under load (docs/guide/scaling.md, "Give a busy
    // daemon organism.optimize_for: speed").
    target === 'memory' ? '--optimize-for-size' : '--no-optimize-for-size',
    ...tierUp,
  ];
}

/**
 * The flags once the daemon runs (its port open), whatever `optimize_for` says: V8's own tier-up.
 * The later tier-up is for start-up code, which runs warm but once; what runs after that runs per
 * request or per message, and eight times later it was still partly unoptimized after 2,000 calls
 * through /mcp: bench mcp-serve's ratio to a bare SDK server was 1.48 and 1.57 with it, 1.30 and
 * 1.25 with V8's own. An idle daemon runs nothing hot: its RSS stays as it was (bench daemon).
 */
export function runningV8Flags(version: string = process.versions.v8): string[] {
  return tierUpFlags(1, version);
}

/** Sets the flags for `target` in this process. */
export function applyV8Flags(target: OptimizeFor): void {
  for (const flag of v8FlagsFor(target)) setFlagsFromString(flag);
}

/** Sets the flags of a running daemon in this process (see runningV8Flags). */
export function applyRunningV8Flags(): void {
  for (const flag of runningV8Flags()) setFlagsFromString(flag);
}

/** Tier-up `later` times V8's own, as this V8 counts it. */
function tierUpFlags(later: number, version: string): string[] {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major < 11 || (major === 11 && minor < 8)
    ? [`--interrupt-budget=${INTERRUPT_BUDGET * later}`]
    : [
        `--invocation-count-for-maglev=${MAGLEV_CALLS * later}`,
        `--invocation-count-for-turbofan=${TURBOFAN_CALLS * later}`,
      ];
}
