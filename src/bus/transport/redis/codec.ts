/**
 * A Message as stream entry fields: `v` (format version) and `m` (the record as JSON). The record
 * is plain data by design (invariant 6), so JSON carries it whole. Its first keys are always id,
 * thread and frame, in that order: the read script (batch.ts) finds the thread and frame there to
 * load their shared state in the same call, without a JSON parser. Decoding checks every field,
 * because a stream is shared with anything that can reach the Redis server: an entry that is not a
 * Message is refused with the reason, and the transport dead-letters it after enough attempts.
 *
 * Format 2 added `frameDepth` (a message that carries its frame, see Message). A daemon still on
 * format 1 would take such a message's frame for pruned and drop it; it refuses the entry
 * instead, and the entry goes to a daemon that reads it. Format 1 entries are still read.
 */
import { MESSAGE_KINDS, type Message, type MessageKind } from '../../message.ts';

export const FORMAT_VERSION = '2';

/** Formats this daemon reads: its own, and format 1 (no message of which carries its frame). */
const READABLE_VERSIONS: ReadonlySet<string> = new Set(['1', FORMAT_VERSION]);

const KINDS: ReadonlySet<string> = new Set<MessageKind>(MESSAGE_KINDS);

const STRING_FIELDS = ['id', 'thread', 'frame', 'from', 'to', 'tag', 'envelope'] as const;

export function encodeMessage(message: Message): string[] {
  return ['v', FORMAT_VERSION, 'm', encodeRecord(message)];
}

/** The `m` field of a message's entry: the record as JSON, id, thread and frame first. */
export function encodeRecord(message: Message): string {
  const record: Message = {
    id: message.id,
    thread: message.thread,
    frame: message.frame,
    from: message.from,
    to: message.to,
    tag: message.tag,
    envelope: message.envelope,
    kind: message.kind,
    hop: message.hop,
    time: message.time,
  };
  if (message.frameDepth !== undefined) record.frameDepth = message.frameDepth;
  return JSON.stringify(record);
}

export class DecodeFailure extends Error {}

/** The Message in an entry's flat field list, or a DecodeFailure saying what is wrong with it. */
export function decodeMessage(fields: readonly string[] | null | undefined): Message {
  if (!fields) throw new DecodeFailure('entry has no fields');
  let version: string | undefined;
  let body: string | undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === 'v') version = fields[i + 1];
    else if (fields[i] === 'm') body = fields[i + 1];
  }
  if (version === undefined || !READABLE_VERSIONS.has(version)) {
    throw new DecodeFailure(
      `entry format version ${JSON.stringify(version ?? null)} is not one of ${[...READABLE_VERSIONS].join(', ')}`,
    );
  }
  if (body === undefined) throw new DecodeFailure('entry has no `m` field');
  return decodeRecord(body);
}

/** The Message in an entry's `m` field (its format version already checked), or a DecodeFailure. */
export function decodeRecord(body: string): Message {
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch (error) {
    throw new DecodeFailure(`entry \`m\` is not JSON: ${(error as Error).message}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new DecodeFailure('entry `m` is not a JSON object');
  }
  const record = data as Record<string, unknown>;
  for (const key of STRING_FIELDS) {
    if (typeof record[key] !== 'string') throw new DecodeFailure(`entry field \`${key}\` is not a string`);
  }
  if (typeof record.kind !== 'string' || !KINDS.has(record.kind)) {
    throw new DecodeFailure(`entry field \`kind\` is not a message kind`);
  }
  for (const key of ['hop', 'time'] as const) {
    if (typeof record[key] !== 'number' || !Number.isFinite(record[key])) {
      throw new DecodeFailure(`entry field \`${key}\` is not a number`);
    }
  }
  if ((record.id as string).length === 0 || (record.to as string).length === 0) {
    throw new DecodeFailure('entry has an empty `id` or `to`');
  }
  const frameDepth = record.frameDepth;
  if (frameDepth !== undefined && !(Number.isSafeInteger(frameDepth) && (frameDepth as number) >= 0)) {
    throw new DecodeFailure('entry field `frameDepth` is not a whole number of at least 0');
  }
  const message: Message = {
    id: record.id as string,
    thread: record.thread as string,
    frame: record.frame as string,
    from: record.from as string,
    to: record.to as string,
    tag: record.tag as string,
    envelope: record.envelope as string,
    kind: record.kind as MessageKind,
    hop: record.hop as number,
    time: record.time as number,
  };
  if (frameDepth !== undefined) message.frameDepth = frameDepth as number;
  return message;
}

/**
 * Whether a record's JSON text begins with this message's id, thread and frame, as encodeRecord
 * writes them: then thread state the read script loaded for the thread and frame it found there is
 * this message's (a hand-made entry with the keys twice or in another order does not pass).
 */
export function recordStartsWith(body: string, message: Message): boolean {
  const { id, thread, frame } = message;
  if (!(plain(id) && plain(thread) && plain(frame))) {
    const start = `{"id":${JSON.stringify(id)},"thread":${JSON.stringify(thread)},"frame":${JSON.stringify(frame)}`;
    return body.startsWith(start) && body.charCodeAt(start.length) === 44; // ','
  }
  // Compared in place: building the start as above cost a delivery about a microsecond.
  let at = 7;
  if (!body.startsWith('{"id":"') || !body.startsWith(id, at)) return false;
  at += id.length;
  if (!body.startsWith('","thread":"', at) || !body.startsWith(thread, at + 12)) return false;
  at += 12 + thread.length;
  if (!body.startsWith('","frame":"', at) || !body.startsWith(frame, at + 11)) return false;
  at += 11 + frame.length;
  return body.startsWith('",', at);
}

/** Characters JSON.stringify writes as they are: a string without them is quoted as it is. */
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

function plain(text: string): boolean {
  return PLAIN.test(text);
}
