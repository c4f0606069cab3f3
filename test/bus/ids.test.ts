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
      expect(writeMessageId(lastIdCount(), buf, 5, id.length)).toBe(true);
      expect(buf.toString('latin1', 5, 5 + id.length)).toBe(id);
      expect(buf[4]).toBe(0xff);
      expect(buf[5 + id.length]).toBe(0xff);
    }
  });

  it('writes a counter in base 36 after the boot prefix, below 2^31 and past it', () => {
    const first = nextId();
    const prefix = first.slice(0, first.lastIndexOf('-') + 1);
    const buf = Buffer.alloc(64, 0xff);
    for (const n of [0, 35, 36, 1_295, 1_296, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 36, 2 ** 40 + 7, 2 ** 53 - 1]) {
      const id = prefix + n.toString(36);
      expect(writeMessageId(n, buf, 3, id.length)).toBe(true);
      expect(buf.toString('latin1', 3, 3 + id.length)).toBe(id);
    }
  });

  it('refuses a length the id has not, writing nothing outside it', () => {
    const first = nextId();
    const prefix = first.slice(0, first.lastIndexOf('-') + 1);
    for (const n of [35, 1_296, 2 ** 40 + 7]) {
      const length = prefix.length + n.toString(36).length;
      for (const wrong of [0, 1, prefix.length, length - 1, length + 1]) {
        const buf = Buffer.alloc(64, 0xff);
        expect(writeMessageId(n, buf, 20, wrong)).toBe(false);
        expect(buf.subarray(0, 20).every((b) => b === 0xff)).toBe(true);
        expect(buf.subarray(20 + wrong).every((b) => b === 0xff)).toBe(true);
      }
    }
  });
});
