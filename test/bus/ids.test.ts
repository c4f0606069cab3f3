import { describe, expect, it } from 'vitest';
import { lastIdCount, nextId, writeMessageId } from '../../src/bus/ids.ts';

describe('nextId', () => {
  it('counts in base 36 after one boot prefix, across every carry of the last digits', () => {
    const first = nextId();
    const prefix = first.slice(0, first.lastIndexOf('-') + 1);
    const start = Number.parseInt(first.slice(prefix.length), 36);
    // Past 36 * 36 ids: the last digit and the one before it both carry over.
    for (let i = 1; i <= 1_400; i++) {
      const id = nextId();
      expect(id.startsWith(prefix)).toBe(true);
      expect(id.slice(prefix.length)).toBe((start + i).toString(36));
    }
  });
});

describe('writeMessageId', () => {
  it('writes the bytes of the id nextId made from the counter lastIdCount gives, across carries', () => {
    const buf = Buffer.alloc(64, 0xff);
    // Past 36 * 36 ids, as above; each written after other bytes, and nothing past its end.
    for (let i = 0; i < 1_400; i++) {
      const id = nextId();
      const length = writeMessageId(lastIdCount(), buf, 5);
      expect(length).toBe(id.length);
      expect(buf.toString('latin1', 5, 5 + length)).toBe(id);
      expect(buf[5 + length]).toBe(0xff);
    }
  });
});
