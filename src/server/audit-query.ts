/**
 * GET /audit: the audit log read backwards (newest first) in chunks, filtered, a page at a time.
 * The cursor is a byte offset: the next page holds records that start before it, so paging stays
 * exact while new records are appended at the end. One request reads at most `maxScanBytes`; if it
 * found fewer records than asked by then, it still answers with a cursor to continue from.
 */
import { open } from 'node:fs/promises';
import { AuditError } from '../errors.ts';

export interface AuditQuery {
  /** allow, warn, deny, or none (calls the guard did not judge). */
  verdict?: string;
  tool?: string;
  listener?: string;
  /** Records of one thread (the dashboard's thread view joins calls to their messages). */
  thread?: string;
  /** call, threat or change. */
  type?: string;
  limit: number;
  cursor?: number;
}

export interface AuditPage {
  records: Record<string, unknown>[];
  next: string | null;
}

const CHUNK = 64 * 1024;

export async function queryAudit(
  path: string,
  query: AuditQuery,
  maxScanBytes = 16 * 1024 * 1024,
): Promise<AuditPage> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], next: null };
    throw new AuditError('audit.read', `cannot read the audit log: ${(error as Error).message}`);
  }
  try {
    const size = (await handle.stat()).size;
    let end = Math.min(query.cursor ?? size, size);
    const records: Record<string, unknown>[] = [];
    let carry = Buffer.alloc(0); // the start of a line whose beginning is in an earlier chunk
    let scanned = 0;
    while (end > 0 || carry.length > 0) {
      const start = Math.max(0, end - CHUNK);
      const chunk = Buffer.alloc(end - start);
      if (chunk.length > 0) await handle.read(chunk, 0, chunk.length, start);
      const buffer = Buffer.concat([chunk, carry]);
      scanned += chunk.length;
      // Lines wholly inside `buffer`, newest first; the first one may be cut unless start is 0.
      let lineEnd = buffer.length;
      for (let i = buffer.length - 1; i >= -1; i--) {
        if (i >= 0 && buffer[i] !== 0x0a) continue;
        if (i < 0 && start > 0) break; // cut: keep it for the next chunk
        const lineStart = i + 1;
        if (lineEnd > lineStart) {
          const record = parse(buffer.subarray(lineStart, lineEnd));
          if (record && accept(record, query)) {
            records.push(record);
            if (records.length >= query.limit) {
              return { records, next: start + lineStart > 0 ? String(start + lineStart) : null };
            }
          }
        }
        lineEnd = i;
      }
      carry = start > 0 ? Buffer.from(buffer.subarray(0, Math.max(0, lineEnd))) : Buffer.alloc(0);
      end = start;
      if (end === 0 && carry.length === 0) break;
      if (scanned >= maxScanBytes && end > 0) return { records, next: String(end + carry.length) };
    }
    return { records, next: null };
  } finally {
    await handle.close();
  }
}

function parse(line: Buffer): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(line.toString('utf8')) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function accept(record: Record<string, unknown>, query: AuditQuery): boolean {
  if (query.type !== undefined && record.type !== query.type) return false;
  if (query.tool !== undefined && record.tool !== query.tool) return false;
  if (query.listener !== undefined && record.listener !== query.listener) return false;
  if (query.thread !== undefined && record.thread !== query.thread) return false;
  if (query.verdict !== undefined) {
    if (record.type !== 'call') return false;
    const verdict = record.verdict ?? 'none';
    if (verdict !== query.verdict) return false;
  }
  return true;
}
