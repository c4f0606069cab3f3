/** The shapes of audit log lines. Every line also carries `prev`, `key_id` and `hash` (see chain.ts). */

/** One tool call, whatever became of it. */
export interface CallRecord {
  type: 'call';
  /** ISO time the call arrived. */
  time: string;
  thread: string;
  listener: string;
  trust: string | null;
  tool: string;
  call_id: string;
  /** Arguments with secrets redacted. */
  input: unknown;
  /** The part of the input the guard judged (say, one shell command of a pipeline). */
  segment: string | null;
  verdict: 'allow' | 'warn' | 'deny' | null;
  rule_id: string | null;
  reason: string | null;
  suggestion: string | null;
  outcome: 'ok' | 'refused' | 'error';
  /** Failure code for refused/error outcomes (ToolNotFound, PermissionDenied, Timeout...). */
  code: string | null;
  message: string | null;
  duration_ms: number;
  /** The API caller (token name) who made this call as `listener`: `organism tools call`, POST /tools/:tool/call. */
  by?: string;
  /** The approval a person gave this call, when it needed one. */
  approval?: string;
  /** With `approval`: hex SHA-256 of the canonical JSON of the arguments that ran. */
  args_sha256?: string;
}

/** Something that looks like an attack on the runtime itself, e.g. a tool module changed after signing. */
export interface ThreatRecord {
  type: 'threat';
  time: string;
  /**
   * `integrity`: a tool changed after signing; `audit_log`: the audit log changed under its writer
   * (`tool` is ''); `state`: a runtime state record (approval, once-only effect) failed its seal and
   * was not acted on (`tool` is the call's, '' when unknown).
   */
  kind: 'integrity' | 'audit_log' | 'state';
  tool: string;
  reason: string;
  module: string | null;
  /** `state`: the runtime state record that failed verification (`approvals/d.<id>`, `effects/<name>`). */
  record?: string;
}

/**
 * An operator's change to the running organism: each listener a hot reload added, removed or
 * replaced, a refused reload, a killed thread, a paused or resumed listener; the switch to a new
 * audit key (written by the audit log itself, sealed with the old key).
 */
export interface ChangeRecord {
  type: 'change';
  time: string;
  action:
    | 'listener.added'
    | 'listener.removed'
    | 'listener.replaced'
    | 'listener.paused'
    | 'listener.resumed'
    | 'thread.killed'
    | 'organism.reloaded'
    | 'organism.reload_refused'
    | 'audit.key_rotated'
    | 'audit.acknowledged';
  /** Who: the API token's name, `sighup`, `anonymous` when the API has no tokens, `organism` for the runtime. */
  by: string;
  listener: string | null;
  thread: string | null;
  /** One line of detail (the reload's summary, the refusal's first error); never a secret. */
  detail: string | null;
}

/** A person's decision on a tool call that waited for approval, or its timeout (by `organism`). */
export interface ApprovalRecord {
  type: 'approval';
  time: string;
  decision: 'approved' | 'denied' | 'timed_out';
  /** The approval's id (GET /api/v1/approvals/:id). */
  approval: string;
  call_id: string;
  thread: string;
  listener: string;
  tool: string;
  /** The arguments as the person was shown them: as they run, the daemon's own secrets masked (absent in logs written before these were recorded). */
  args?: unknown;
  /** Hex SHA-256 of the canonical JSON of the arguments as they run (the call record repeats it). */
  args_sha256?: string;
  /** The API token's name, `anonymous` when the API has no tokens, `organism` for a timeout. */
  by: string;
  /** Why, as the decider gave it (redacted), or how long nobody answered. */
  reason: string | null;
}

/**
 * The first record of a log (checkpoint.ts): which organism it belongs to and its id, which the
 * checkpoints kept outside the log also name, so another organism's log (or another log of this
 * one) does not pass for it. `adopted`: records already in the file when it got its identity (a
 * log from before identity records); 0 for a log that starts with it.
 */
export interface LogRecord {
  type: 'log';
  time: string;
  organism: string;
  log_id: string;
  adopted: number;
}

export type AuditEntry = CallRecord | ThreatRecord | ChangeRecord | ApprovalRecord | LogRecord;

/** As written: the entry plus its place in the hash chain (no key_id on lines from before audit keys). */
export type AuditLine = AuditEntry & { prev: string | null; key_id?: string; hash: string };
