/**
 * The hash chain of the audit log. A line is the entry's JSON with `prev` (sha256 of the previous
 * line's full text, null for the first line) and then `hash` (sha256 of the line's text up to, but
 * not including, the `hash` member, closed with `}`). Changing any byte of a line breaks its own
 * hash; rewriting the hash too breaks the next line's `prev`; removing lines at the head breaks the
 * first line's `prev: null`.
 */
import { createHash } from 'node:crypto';
import type { AuditEntry } from './record.ts';

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Serializes one entry as the next line after `prevLine` (undefined for the first line). */
export function chainLine(entry: AuditEntry, prevLine: string | undefined): string {
  const body = JSON.stringify({ ...entry, prev: prevLine === undefined ? null : sha256(prevLine) });
  const hash = sha256(body);
  return `${body.slice(0, -1)},"hash":"${hash}"}`;
}

const HASH_SUFFIX = /,"hash":"([0-9a-f]{64})"\}$/;

export type LineCheck = { ok: true } | { ok: false; reason: string };

/** Checks one line against the line before it (undefined for the first). */
export function checkLine(line: string, prevLine: string | undefined): LineCheck {
  const match = HASH_SUFFIX.exec(line);
  if (!match) return { ok: false, reason: 'has no hash member at its end' };
  let parsed: { prev?: unknown };
  try {
    parsed = JSON.parse(line) as { prev?: unknown };
  } catch {
    return { ok: false, reason: 'is not valid JSON' };
  }
  const body = `${line.slice(0, match.index)}}`;
  if (sha256(body) !== match[1])
    return { ok: false, reason: 'does not match its own hash (the record was changed)' };
  const expected = prevLine === undefined ? null : sha256(prevLine);
  if (parsed.prev !== expected) {
    return {
      ok: false,
      reason:
        prevLine === undefined
          ? 'is the first line but names a previous record (lines were removed from the start)'
          : 'does not chain to the line before it (a line was changed, removed or inserted)',
    };
  }
  return { ok: true };
}

export type ChainReport =
  | { ok: true; records: number }
  | { ok: false; records: number; line: number; reason: string };

/** Verifies a whole log's text; `line` in a failure is 1-based. */
export function verifyChain(text: string): ChainReport {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let prev: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const check = checkLine(line, prev);
    if (!check.ok) return { ok: false, records: i, line: i + 1, reason: check.reason };
    prev = line;
  }
  return { ok: true, records: lines.length };
}
