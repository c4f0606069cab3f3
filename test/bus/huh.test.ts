/** The <huh> a sender gets: its attempt is quoted as the first 2048 bytes, base64, never more. */
import { describe, expect, it } from 'vitest';
import { huhXml } from '../../src/bus/system.ts';

const attempt = (xml: string) => {
  const m = /<attempt encoding="base64" truncated="(true|false)">([^<]*)<\/attempt>/.exec(xml)!;
  return { truncated: m[1] === 'true', bytes: Buffer.from(m[2]!, 'base64') };
};

describe('huhXml', () => {
  it('quotes a short attempt whole', () => {
    const { truncated, bytes } = attempt(huhXml('parse', 'not xml é'));
    expect(truncated).toBe(false);
    expect(bytes.toString('utf8')).toBe('not xml é');
  });

  it('quotes the first 2048 bytes of a long one, as UTF-8, whatever its characters', () => {
    for (const text of ['<b/>'.repeat(262_000), `${'a'.repeat(2047)}😀tail`, 'é😀x'.repeat(1000)]) {
      const { truncated, bytes } = attempt(huhXml('parse', text));
      expect(truncated).toBe(true);
      expect(bytes.equals(Buffer.from(text, 'utf8').subarray(0, 2048))).toBe(true);
    }
    // Exactly 2048 bytes is not truncated.
    expect(attempt(huhXml('route', 'x'.repeat(2048))).truncated).toBe(false);
  });
});
