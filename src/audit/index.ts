/** The append-only, hash-chained audit log of tool calls and threats. */
export { type ChainReport, chainLine, checkLine, sha256, verifyChain } from './chain.ts';
export { AuditLog, type AuditLogOptions, type AuditSink, defaultAuditLogOptions } from './log.ts';
export { readAuditLines, verifyAuditFile } from './read.ts';
export type { AuditEntry, AuditLine, CallRecord, ChangeRecord, ThreatRecord } from './record.ts';
export { REDACTED, redact, redactString, SECRET_KEY } from './redact.ts';
