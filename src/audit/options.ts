/** The audit log writer's options and their defaults, in one place (log.ts exports them). */
import { schemaDefault } from '../config/schema.ts';
import type { AuditKeyring } from './key.ts';

export interface AuditLogOptions {
  /** Absolute path of the JSON-lines file. */
  path: string;
  /** Where loud failures go; stderr by default. */
  onError?: (message: string) => void;
  /** Wait before the first retry of a failed write (ms); doubles on each failure, up to 30 s. */
  retryMs?: number;
  /** The audit keys (key.ts); without them lines are unkeyed, which verify does not accept as proof. */
  keys?: AuditKeyring;
  /**
   * Records that come within this many ms of the last write share the next write (ms; 0 writes
   * each at once). A record after a quiet spell is written at once; flush() and close() never wait.
   */
  gatherMs?: number;
  /** Identity and checkpoints (needs `keys`); without them the log is a plain keyed chain. */
  checkpoints?: AuditCheckpointOptions;
}

/** `audit.on_change`: what the runtime does when the log changed under its writer. */
export type OnAuditChange = 'refuse' | 'warn';

export interface AuditCheckpointOptions {
  /** The checkpoint file (checkpointFile()). */
  file: string;
  /** organism.name, written in the log's identity record and every checkpoint. */
  organism: string;
  /** A checkpoint after this many records (audit.checkpoint_every). */
  everyRecords?: number;
  /** ...or this long after a record that no checkpoint covers yet (audit.checkpoint_interval_ms). */
  intervalMs?: number;
  /** refuse: tool calls are refused until an operator acknowledges; warn: only the threat record and the error. */
  onChange?: OnAuditChange;
  /**
   * Where a change found (level error) and its acknowledgement (info) are told, in words (the
   * daemon's logger); by default the log's onError.
   */
  report?: (level: 'error' | 'info', message: string) => void;
  /** How often a writer that refuses looks for an operator's acknowledgement (ms). */
  pollMs?: number;
}

export function defaultAuditCheckpointOptions(): Required<
  Omit<AuditCheckpointOptions, 'file' | 'organism' | 'report'>
> {
  return {
    everyRecords: schemaDefault<number>('audit.checkpoint_every'),
    intervalMs: schemaDefault<number>('audit.checkpoint_interval_ms'),
    onChange: schemaDefault<OnAuditChange>('audit.on_change'),
    pollMs: 1000,
  };
}

export function defaultAuditLogOptions(): Required<Omit<AuditLogOptions, 'path' | 'keys' | 'checkpoints'>> {
  return {
    onError: (message) => process.stderr.write(`[organism audit] ${message}\n`),
    retryMs: 1000,
    // Tool calls that each wait on I/O (an MCP server's, a model's) come one per event-loop turn, so
    // without gathering each is its own stat + append with its callbacks on the daemon's thread:
    // ~90 µs of CPU per call measured (bench mcp), more than the MCP round trip it audits.
    gatherMs: 5,
  };
}

/** The writer's own options with their defaults (log.ts). */
export type WriterOptions = Required<Omit<AuditLogOptions, 'path' | 'keys' | 'checkpoints'>>;

/** The checkpoint options with their defaults (tracker.ts). */
export type TrackOptions = Required<AuditCheckpointOptions>;

export function writerOptions(options: AuditLogOptions): WriterOptions {
  const { keys: _keys, checkpoints: _checkpoints, ...rest } = options;
  return { ...defaultAuditLogOptions(), ...stripUndefined(rest) } as WriterOptions;
}

export function trackOptions(
  checkpoints: AuditCheckpointOptions,
  onError: (message: string) => void,
): TrackOptions {
  return {
    ...defaultAuditCheckpointOptions(),
    report: (_level: string, message: string) => onError(message),
    ...stripUndefined(checkpoints),
  } as TrackOptions;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
