import { describe, expect, it } from 'vitest';
import { lastIdCount, nextId, writeIdDigits, writeMessageId } from '../../src/bus/ids.ts';

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

describe('writeIdDigits', () => {
  it('writes a counter in base 36 ending where it is told, below 2^31 and past it', () => {
    const buf = Buffer.alloc(32, 0x2e);
    for (const n of [0, 35, 36, 1295, 1296, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 36, 2 ** 40 + 7, 2 ** 53 - 1]) {
      buf.fill(0x2e);
      const digits = writeIdDigits(n, buf, 20);
      expect(buf.toString('latin1', 20 - digits, 20)).toBe(n.toString(36));
      expect(buf[19 - digits]).toBe(0x2e);
      expect(buf[20]).toBe(0x2e);
    }
  });
});
