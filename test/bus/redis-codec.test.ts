/**
 * The stream entry format (src/bus/transport/redis/codec.ts): what one daemon writes, another reads, and
 * what either refuses.
 */
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/bus/message.ts';
import {
  DecodeFailure,
  decodeMessage,
  decodeRecord,
  encodeMessage,
  encodeRecord,
  FORMAT_VERSION,
  recordStartsWith,
} from '../../src/bus/transport/redis/codec.ts';

const message: Message = {
  id: 'm-1',
  thread: 't-1',
  frame: 'f-1',
  from: 'sender',
  to: 'worker',
  tag: 'ping',
  envelope: '<message/>',
  kind: 'message',
  hop: 3,
  time: 1_700_000_000_000,
};

describe('redis stream codec', () => {
  it('carries a frame depth when the message carries its frame, and no field when it does not', () => {
    const carrying = { ...message, frameDepth: 2 };
    expect(decodeMessage(encodeMessage(carrying))).toEqual(carrying);
    expect(encodeMessage(carrying).slice(0, 2)).toEqual(['v', FORMAT_VERSION]);
    expect(JSON.parse(encodeRecord(message))).not.toHaveProperty('frameDepth');
    expect(decodeMessage(encodeMessage(message))).toEqual(message);
  });

  it('reads format 1 entries, written before messages could carry their frame', () => {
    expect(decodeMessage(['v', '1', 'm', encodeRecord(message)])).toEqual(message);
  });

  it('refuses an unknown format and a frame depth that is not a whole number of at least 0', () => {
    expect(() => decodeMessage(['v', '9', 'm', encodeRecord(message)])).toThrow(
      /entry format version "9" is not one of 1, 2/,
    );
    for (const frameDepth of [-1, 1.5, '2', null]) {
      const body = JSON.stringify({ ...JSON.parse(encodeRecord(message)), frameDepth });
      expect(() => decodeRecord(body)).toThrow(DecodeFailure);
      expect(() => decodeRecord(body)).toThrow(/`frameDepth` is not a whole number of at least 0/);
    }
  });

  it("tells whether a record begins with a message's id, thread and frame, as the read script took them", () => {
    expect(recordStartsWith(encodeRecord(message), message)).toBe(true);
    // Ids that JSON escapes are compared in their escaped form.
    const odd = { ...message, id: 'm"1', thread: 't\\1', frame: 'f\u00011' };
    expect(recordStartsWith(encodeRecord(odd), odd)).toBe(true);
    expect(recordStartsWith(encodeRecord(message), odd)).toBe(false);
    // Another message's, one whose id is a prefix of the record's, and keys in another order.
    expect(recordStartsWith(encodeRecord(message), { ...message, thread: 't-2' })).toBe(false);
    expect(recordStartsWith(encodeRecord({ ...message, id: 'm-10' }), message)).toBe(false);
    expect(recordStartsWith(encodeRecord({ ...message, frame: 'f-12' }), message)).toBe(false);
    const swapped = '{"thread":"t-1","id":"m-1","frame":"f-1","from":"sender"}';
    expect(recordStartsWith(swapped, message)).toBe(false);
    // The start alone, with no field after it, is not a record of this format.
    expect(recordStartsWith('{"id":"m-1","thread":"t-1","frame":"f-1"}', message)).toBe(false);
  });
});
