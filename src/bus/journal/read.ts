/**
 * Reading the bus journal at start: every segment, oldest first, into what is still to do (the
 * accepted messages without a handled mark, in journal order), the ids the journal holds, and
 * what was live in each segment. A line that does not parse is skipped and counted: at the very end
 * of the newest segment it is a record torn by a crash mid-write (expected after kill -9 or a power
 * loss), anywhere else corruption; neither stops the daemon. A repeated record (a write retried
 * after a failure) counts once.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Message } from '../message.ts';

/** A frame as the journal keeps it: id, listener, caller, parent frame id, depth. */
export type JournaledFrame = [
  id: string,
  listener: string,
  caller: string,
  parent: string | null,
  depth: number,
];

/** A message accepted and not handled before the daemon stopped. */
export interface PendingMessage {
  message: Message;
  /** The message's frame first, then the frames above it. */
  frames: JournaledFrame[];
  scope: string[] | undefined;
}

export interface JournalReport {
  segments: number;
  accepted: number;
  handled: number;
  /** Accepted and never handled: given back by takePending(). */
  pending: number;
  /** 1 when the last line of the newest segment was cut short (a crash mid-write); it is skipped. */
  torn: number;
  /** Other lines that did not parse; skipped and reported. */
  corrupt: number;
  ms: number;
}

export interface JournalContents {
  report: JournalReport;
  pending: PendingMessage[];
  /** The segments taken over, oldest first, numbered 1, 2, ... in that order. */
  segments: number[];
  /** File name of each segment taken over (index = segment number - 1). */
  files: string[];
  /** Highest sequence number in any file name here (this run's segments go after it). */
  maxSequence: number;
  /** Segment of each pending message. */
  segmentOf: Map<string, number>;
  /** Every message id the journal holds, handled or not. */
  ids: Set<string>;
}

/**
 * `journal-<pid>-<sequence>.jsonl`: the pid only keeps the names of two runs apart, it says nothing
 * about who may read the file. The daemon holds its data dir's lock (one daemon per data dir, see
 * src/server/address-file.ts), so every segment found at start is an earlier run's, whatever
 * process has that pid now (pids are reused: a container's daemon is pid 1 on every start), and
 * every one is taken over.
 */
const SEGMENT = /^journal-(\d+)-(\d{8})\.jsonl$/;
export const segmentName = (pid: number, sequence: number) =>
  `journal-${pid}-${String(sequence).padStart(8, '0')}.jsonl`;

export async function readJournal(dir: string): Promise<JournalContents> {
  const started = performance.now();
  const found = (await readdir(dir))
    .map((name) => ({ name, match: SEGMENT.exec(name) }))
    .filter(({ match }) => match !== null)
    .map(({ name, match }) => ({ name, pid: Number(match![1]), sequence: Number(match![2]) }));
  const maxSequence = Math.max(0, ...found.map((f) => f.sequence));
  const taken = found.sort((a, b) => a.sequence - b.sequence || a.pid - b.pid);
  const names = taken.map((f) => f.name);
  const segments = names.map((_, i) => i + 1);
  const report: JournalReport = {
    segments: segments.length,
    accepted: 0,
    handled: 0,
    pending: 0,
    torn: 0,
    corrupt: 0,
    ms: 0,
  };
  /** Accepted records by id, in journal order (a Map keeps insertion order). */
  const accepted = new Map<string, { record: PendingMessage; segment: number }>();
  const ids = new Set<string>();
  for (let s = 0; s < segments.length; s++) {
    const n = segments[s]!;
    const text = await readFile(join(dir, names[s]!), 'utf8');
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      const last = end === -1;
      if (last) end = text.length;
      const line = text.slice(start, end);
      start = end + 1;
      if (line === '') continue;
      const record = parseRecord(line);
      if (record === undefined) {
        if (last && s === segments.length - 1) report.torn++;
        else report.corrupt++;
        continue;
      }
      if ('h' in record) {
        for (const id of record.h) if (accepted.delete(id)) report.handled++;
        continue;
      }
      const id = record.message.id;
      if (ids.has(id)) continue;
      ids.add(id);
      report.accepted++;
      accepted.set(id, { record, segment: n });
    }
  }
  const pending: PendingMessage[] = [];
  const segmentOf = new Map<string, number>();
  for (const [id, { record, segment }] of accepted) {
    pending.push(record);
    segmentOf.set(id, segment);
  }
  report.pending = pending.length;
  report.ms = Math.round(performance.now() - started);
  return { report, pending, segments, files: names, maxSequence, segmentOf, ids };
}

type ParsedRecord = PendingMessage | { h: string[] };

function parseRecord(line: string): ParsedRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as { a?: Message; f?: JournaledFrame[]; s?: string[]; h?: unknown };
  if (Array.isArray(record.h)) return { h: record.h.filter((id): id is string => typeof id === 'string') };
  const m = record.a;
  if (
    typeof m !== 'object' ||
    m === null ||
    typeof m.id !== 'string' ||
    typeof m.thread !== 'string' ||
    typeof m.frame !== 'string' ||
    typeof m.to !== 'string' ||
    typeof m.from !== 'string' ||
    typeof m.envelope !== 'string' ||
    !Array.isArray(record.f)
  ) {
    return undefined;
  }
  return { message: m, frames: record.f, scope: Array.isArray(record.s) ? record.s : undefined };
}
