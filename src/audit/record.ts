/** The shapes of audit log lines. Every line also carries `prev` and `hash` (see log.ts). */

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
}

/** Something that looks like an attack on the runtime itself, e.g. a tool module changed after signing. */
export interface ThreatRecord {
  type: 'threat';
  time: string;
  kind: 'integrity';
  tool: string;
  reason: string;
  module: string | null;
}

export type AuditEntry = CallRecord | ThreatRecord;

/** As written: the entry plus its place in the hash chain. */
export type AuditLine = AuditEntry & { prev: string | null; hash: string };
