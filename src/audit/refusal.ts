/**
 * A change of the audit log that a writer found, or that the checkpoints carry from another
 * writer, and no operator has acknowledged yet. With `on_change: refuse` tool calls are refused
 * while it is open: the record of what ran can no longer be trusted to be whole, and an agent must
 * not go on acting on a log nobody has looked at. The acknowledgement comes from another process
 * (`organism audit --acknowledge` writes a checkpoint), so the writer watches the checkpoint file
 * for it and lets calls run again without a restart.
 */
import type { Checkpoint, CheckpointStore } from './checkpoint.ts';
import type { TrackOptions } from './options.ts';

export interface ChangeRefusalOptions {
  options: Pick<TrackOptions, 'onChange' | 'pollMs' | 'report'>;
  store: CheckpointStore;
  /** Runs the look at the checkpoints between the writer's writes (tracker.ts). */
  exclusive: (work: () => Promise<void>) => Promise<void>;
  /** An operator accepted the log as it is: the checkpoint that says so. */
  acknowledged: (checkpoint: Checkpoint) => void;
}

export class ChangeRefusal {
  readonly #options: ChangeRefusalOptions['options'];
  readonly #store: CheckpointStore;
  readonly #exclusive: ChangeRefusalOptions['exclusive'];
  readonly #acknowledged: ChangeRefusalOptions['acknowledged'];
  #changed: string | undefined;
  #poll: NodeJS.Timeout | undefined;
  /** The checkpoint file's size when last read: an unchanged file is not read again. */
  #checkpointSize = -1;

  constructor({ options, store, exclusive, acknowledged }: ChangeRefusalOptions) {
    this.#options = options;
    this.#store = store;
    this.#exclusive = exclusive;
    this.#acknowledged = acknowledged;
  }

  /** The change found and not acknowledged, in words. */
  get changed(): string | undefined {
    return this.#changed;
  }

  /** Why tool calls must be refused now, or undefined. */
  refusal(): string | undefined {
    if (this.#changed === undefined || this.#options.onChange !== 'refuse') return undefined;
    return `the audit log changed under the runtime (${this.#changed}); tool calls are refused until an operator checks it (organism audit --verify) and runs organism audit --acknowledge`;
  }

  /** A change this writer found: told at level error; the first one found is the one kept. */
  found(reason: string): void {
    this.#changed ??= reason.slice(0, 1000);
    if (this.#options.onChange === 'refuse') this.#startPolling();
    this.#report('error', `AUDIT LOG CHANGED: ${reason}`);
  }

  /** The open change the last checkpoint names (none: undefined or null), as the writer starts. */
  restore(changed: string | null | undefined): void {
    this.#changed = changed ?? undefined;
  }

  /** Once the writer has looked at the log: a change still open refuses and waits for its acknowledgement. */
  watch(): void {
    if (this.#changed !== undefined && this.#options.onChange === 'refuse') this.#startPolling();
  }

  /** A checkpoint just written carries another writer's open change: it is this writer's too. */
  carried(changed: string | null): void {
    if (changed === null || this.#changed !== undefined) return;
    this.#changed = changed;
    if (this.#options.onChange === 'refuse') this.#startPolling();
  }

  /** This writer wrote the acknowledgement itself; the watch tells it when it reads it back. */
  clear(): void {
    this.#changed = undefined;
  }

  /** The writer closes: no more watching (a change found later is still refused, but not watched). */
  stop(): void {
    clearInterval(this.#poll);
  }

  #report(level: 'error' | 'info', message: string): void {
    try {
      this.#options.report(level, message);
    } catch {
      // The daemon's logger; a failure there must not cost the record.
    }
  }

  #startPolling(): void {
    if (this.#poll !== undefined) return;
    this.#poll = setInterval(() => {
      void this.#exclusive(async () => {
        const size = await this.#store.size();
        if (size === this.#checkpointSize) return;
        this.#checkpointSize = size;
        const latest = (await this.#store.latest().catch(() => undefined))?.checkpoint;
        if (latest?.kind === 'acknowledged' && latest.changed === null) {
          this.#changed = undefined;
          this.#acknowledged(latest);
          clearInterval(this.#poll);
          this.#poll = undefined;
          this.#report(
            'info',
            `audit log change acknowledged by ${latest.by ?? 'an operator'}; tool calls run again`,
          );
        }
      });
    }, this.#options.pollMs);
    this.#poll.unref();
  }
}
