/** The append-only audit log of tool calls and threats, chained with HMAC under a key kept outside data_dir. */
export { type ChainReport, chainLine, checkLine, lineKeyId, sha256, verifyChain } from './chain.ts';
export {
  type AuditKey,
  type AuditKeyOptions,
  AuditKeyring,
  auditKeyId,
  auditKeyOptions,
  DEFAULT_AUDIT_KEY_ENV,
  defaultAuditKeyFile,
  keyFileProblem,
  loadAuditKeys,
  parseAuditKeys,
  rotateAuditKeyFile,
} from './key.ts';
export { AuditLog, type AuditLogOptions, type AuditSink, defaultAuditLogOptions } from './log.ts';
export { readAuditLines, verifyAuditFile } from './read.ts';
export type {
  ApprovalRecord,
  AuditEntry,
  AuditLine,
  CallRecord,
  ChangeRecord,
  ThreatRecord,
} from './record.ts';
export { REDACTED, redact, redactString, SECRET_KEY } from './redact.ts';
