/**
 * The keyed chain of the audit log. A line is the entry's JSON with `prev` (SHA-256 of the previous
 * line's full text, null for the first line), `key_id` (which key seals it, see key.ts) and then
 * `hash`: HMAC-SHA256 under that key of the line's text up to, but not including, the `hash`
 * member, closed with `}`. Changing any byte of a line breaks its own hash; removing or inserting a
 * line breaks the next line's `prev`; and without the key nobody can recompute either.
 *
 * Lines written before audit keys existed have no `key_id` and a plain SHA-256 `hash`. They still
 * verify as links, but prove nothing: anyone can recompute them, and a log rewritten without the
 * key looks exactly like one from before keys. So a log with unkeyed lines is never `intact`, even
 * when keyed lines follow them (a keyed writer appending to a rewritten log would otherwise
 * launder it); an unkeyed line after a keyed one is `broken` (a rewrite from that point on).
 */
import { createHmac, hash, timingSafeEqual } from 'node:crypto';
import type { AuditKey } from './key.ts';
import type { AuditEntry } from './record.ts';

export function sha256(text: string): string {
  // One-shot: no Hash object per call (the writer hashes every line it writes).
  return hash('sha256', text, 'hex');
}

function hmac(secret: Buffer, text: string): string {
  return createHmac('sha256', secret).update(text, 'utf8').digest('hex');
}

/**
 * The text a line's hash covers: `JSON.stringify({ ...entry, prev, key_id })`. The usual entry
 * (a plain record without members of those names) is serialised as it is and the two members
 * appended as text, which gives the same bytes without copying the record first (the copy cost
 * more than the serialising). Anything else takes the literal way, so the bytes never differ:
 * an entry that has `prev` or `key_id` of its own (the spread keeps their place), a toJSON, an
 * empty object, or what does not serialise as an object.
 */
function lineBody(entry: AuditEntry, prev: string | null, key: AuditKey | undefined): string {
  if (
    typeof entry === 'object' &&
    entry !== null &&
    !Object.hasOwn(entry, 'prev') &&
    !(key !== undefined && Object.hasOwn(entry, 'key_id')) &&
    !('toJSON' in entry)
  ) {
    const json = JSON.stringify(entry);
    const id = key === undefined ? '' : JSON.stringify(key.id);
    if (json.length > 2 && json.charCodeAt(0) === 0x7b && id !== undefined) {
      const link = prev === null ? 'null' : `"${prev}"`; // hex from sha256(): nothing to escape
      return key === undefined
        ? `${json.slice(0, -1)},"prev":${link}}`
        : `${json.slice(0, -1)},"prev":${link},"key_id":${id}}`;
    }
  }
  return JSON.stringify(key === undefined ? { ...entry, prev } : { ...entry, prev, key_id: key.id });
}

/** A line with the SHA-256 of its own text (what the next line's `prev` names), computed once. */
export interface ChainHead {
  line: string;
  hash: string;
}

/** The head for a line read back from a file (`undefined`: the log is empty). */
export function chainHead(line: string | undefined): ChainHead | undefined {
  return line === undefined ? undefined : { line, hash: sha256(line) };
}

/** Seals `entry` as the line after `head` (see chainLine); the writer chains a batch through this. */
export function sealLine(entry: AuditEntry, head: ChainHead | undefined, key?: AuditKey): ChainHead {
  const line = sealedLine(entry, head === undefined ? null : head.hash, key);
  return { line, hash: sha256(line) };
}

function sealedLine(entry: AuditEntry, prev: string | null, key: AuditKey | undefined): string {
  const body = lineBody(entry, prev, key);
  const seal = key === undefined ? sha256(body) : hmac(key.secret, body);
  return `${body.slice(0, -1)},"hash":"${seal}"}`;
}

/**
 * Serializes one entry as the next line after `prevLine` (undefined for the first line), sealed
 * with `key`. Without a key the line is unkeyed (plain SHA-256): only for tests of old logs.
 */
export function chainLine(entry: AuditEntry, prevLine: string | undefined, key?: AuditKey): string {
  return sealedLine(entry, prevLine === undefined ? null : sha256(prevLine), key);
}

const HASH_SUFFIX = /,"hash":"([0-9a-f]{64})"\}$/;
const KEY_ID = /^[0-9a-f]{8}$/;

/** The key id a line names, or undefined for an unkeyed (or unreadable) line. */
export function lineKeyId(line: string): string | undefined {
  const match = /,"key_id":"([0-9a-f]{8})","hash":"[0-9a-f]{64}"\}$/.exec(line);
  return match?.[1];
}

export type LineCheck = { ok: true; keyId: string | null } | { ok: false; reason: string };

function sameHex(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/**
 * Checks one line against the line before it (undefined for the first) and the keys (by id).
 * Says which key sealed it (null: unkeyed). Key order and downgrades are verifyChain's business.
 */
export function checkLine(
  line: string,
  prevLine: string | undefined,
  keys: ReadonlyMap<string, AuditKey> = new Map(),
): LineCheck {
  const match = HASH_SUFFIX.exec(line);
  if (!match) return { ok: false, reason: 'has no hash member at its end' };
  let parsed: { prev?: unknown; key_id?: unknown };
  try {
    parsed = JSON.parse(line) as { prev?: unknown; key_id?: unknown };
  } catch {
    return { ok: false, reason: 'is not valid JSON' };
  }
  const body = `${line.slice(0, match.index)}}`;
  const hash = match[1] as string;
  let keyId: string | null = null;
  if (parsed.key_id === undefined) {
    if (!sameHex(sha256(body), hash))
      return { ok: false, reason: 'does not match its own hash (the record was changed)' };
  } else {
    if (typeof parsed.key_id !== 'string' || !KEY_ID.test(parsed.key_id))
      return { ok: false, reason: 'has a key_id that is not 8 hex digits' };
    keyId = parsed.key_id;
    const key = keys.get(keyId);
    if (!key) {
      const known = [...keys.keys()];
      return {
        ok: false,
        reason: `is sealed with key ${keyId}, which is not among the configured keys (${known.length ? known.join(', ') : 'none found'}): configure that key, or the record was forged`,
      };
    }
    if (!sameHex(hmac(key.secret, body), hash)) {
      return {
        ok: false,
        reason: `does not match its own hash (HMAC-SHA256 with key ${keyId}): the record was changed, or written by someone without the key`,
      };
    }
  }
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
  return { ok: true, keyId };
}

interface ReportBase {
  /** Lines that verified (all of them, or those before the failure). */
  records: number;
  /** Of those, lines sealed with a key. */
  keyed: number;
  /** Of those, unkeyed lines at the head of the log (from before audit keys). */
  unkeyed: number;
  /** Ids of the keys that sealed them, in the order they were used. */
  keys: string[];
}

/**
 * `intact`: every line is sealed with one of the keys and chains to the one before (an empty log
 * too). `unkeyed`: every line links, but the first `unkeyed` lines carry no key, so they are not
 * proven (anyone who can write the file can recompute them); any `keyed` lines after them are.
 * `broken`: `line` (1-based) is the first line that fails, for `reason`.
 */
export type ChainReport =
  | (ReportBase & { ok: true; verdict: 'intact'; head: string | null })
  | (ReportBase & { ok: false; verdict: 'unkeyed'; head: string })
  | (ReportBase & { ok: false; verdict: 'broken'; line: number; reason: string });

/** Verifies a whole log's text against `keys` (oldest first, as in a keyring). */
export function verifyChain(text: string, keys: readonly AuditKey[] = []): ChainReport {
  const byId = new Map(keys.map((key) => [key.id, key]));
  const order = new Map(keys.map((key, i) => [key.id, i]));
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const base: ReportBase = { records: 0, keyed: 0, unkeyed: 0, keys: [] };
  const broken = (i: number, reason: string): ChainReport => ({
    ...base,
    ok: false,
    verdict: 'broken',
    line: i + 1,
    reason,
  });
  let prev: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const check = checkLine(line, prev, byId);
    if (!check.ok) return broken(i, check.reason);
    const last = base.keys.at(-1);
    if (check.keyId === null) {
      if (last !== undefined) {
        return broken(
          i,
          `has no key_id after records sealed with key ${last}: it was rewritten by someone without the key`,
        );
      }
      base.unkeyed++;
    } else {
      if (last !== undefined && last !== check.keyId) {
        if ((order.get(check.keyId) as number) < (order.get(last) as number)) {
          return broken(
            i,
            `is sealed with key ${check.keyId}, older than key ${last} that sealed the records before it`,
          );
        }
      }
      if (last !== check.keyId) base.keys.push(check.keyId);
      base.keyed++;
    }
    base.records++;
    prev = line;
  }
  const head = prev === undefined ? null : (HASH_SUFFIX.exec(prev)?.[1] as string);
  if (head !== null && base.unkeyed > 0) return { ...base, ok: false, verdict: 'unkeyed', head };
  return { ...base, ok: true, verdict: 'intact', head };
}
