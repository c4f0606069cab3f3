import { describe, expect, it } from 'vitest';
import { XmlError } from '../../src/errors.ts';
import { DEFAULT_XML_LIMITS as L, xmlLimits } from '../../src/xml/limits.ts';
import { parsePayload } from '../../src/xml/parse.ts';
import { repairPayloads } from '../../src/xml/repair.ts';

function refused(text: string, limits = L): XmlError {
  try {
    repairPayloads(text, limits);
  } catch (err) {
    expect(err).toBeInstanceOf(XmlError);
    return err as XmlError;
  }
  throw new Error('expected a refusal');
}

describe('repairPayloads', () => {
  it('returns clean XML untouched', () => {
    expect(repairPayloads('<shout><text>Hi &amp; bye</text></shout>', L)).toEqual([
      '<shout><text>Hi &amp; bye</text></shout>',
    ]);
  });

  it('strips prose before and after the XML', () => {
    const text =
      'Sure! Here is the message you asked for:\n\n<shout><text>Hi</text></shout>\n\nLet me know if... ok?';
    expect(repairPayloads(text, L)).toEqual(['<shout><text>Hi</text></shout>']);
  });

  it('takes XML out of code fences, several fences in order', () => {
    expect(repairPayloads('Here you go:\n```xml\n<shout><text>Hi</text></shout>\n```\nDone.', L)).toEqual([
      '<shout><text>Hi</text></shout>',
    ]);
    expect(repairPayloads('```\n<a>1</a>\n```\nthen\n```xml\n<b>2</b>\n```', L)).toEqual([
      '<a>1</a>',
      '<b>2</b>',
    ]);
    // A fence the model never closed.
    expect(repairPayloads('```xml\n<a>1</a>', L)).toEqual(['<a>1</a>']);
  });

  it('closes tags left open at the end, and drops a truncated tag', () => {
    expect(repairPayloads('<shout><text>Hello', L)).toEqual(['<shout><text>Hello</text></shout>']);
    expect(repairPayloads('<shout><text>Hi</te', L)).toEqual(['<shout><text>Hi</text></shout>']);
    expect(repairPayloads('<shout><text>Hi</text><n', L)).toEqual(['<shout><text>Hi</text></shout>']);
  });

  it('closes inner elements when an outer end tag arrives, matching case-insensitively if needed', () => {
    expect(repairPayloads('<a><b><c>deep</a>', L)).toEqual(['<a><b><c>deep</c></b></a>']);
    expect(repairPayloads('<shout><Text>x</text></shout>', L)).toEqual(['<shout><Text>x</Text></shout>']);
    expect(repairPayloads('<a>x</b></a>', L)).toEqual(['<a>x</a>']);
  });

  it('escapes stray & and < in text where they cannot start markup', () => {
    const [out] = repairPayloads('<shout><text>Tom & Jerry < Spike &amp; 3<4 &#65;</text></shout>', L);
    expect(out).toBe('<shout><text>Tom &amp; Jerry &lt; Spike &amp; 3&lt;4 &#65;</text></shout>');
    expect(parsePayload(out!, L).node.children[0]!.text).toBe('Tom & Jerry < Spike & 3<4 A');
  });

  it('quotes bare attribute values', () => {
    expect(repairPayloads('<shout level=3 loud><text>x</text></shout>', L)).toEqual([
      '<shout level="3" loud="loud"><text>x</text></shout>',
    ]);
  });

  it('turns several roots into several payloads, in order', () => {
    expect(repairPayloads('<a>1</a><b>2</b>\n<c/>', L)).toEqual(['<a>1</a>', '<b>2</b>', '<c/>']);
    expect(
      repairPayloads(
        'First I ask the shouter: <shout><text>hi</text></shout> and then the logger <log>done',
        L,
      ),
    ).toEqual(['<shout><text>hi</text></shout>', '<log>done</log>']);
  });

  it('refuses text with nothing salvageable', () => {
    for (const text of ['no xml here at all', '', '   ', 'a < b and c > d', '```\njust code\n```']) {
      const err = refused(text);
      expect(err.code, text).toBe('xml.malformed');
      expect(err.message).toMatch(/no XML element could be recovered/);
    }
  });

  it('still refuses DOCTYPE, bad characters and limits', () => {
    expect(refused('Here: <!DOCTYPE x [<!ENTITY e "x">]><a>&e;</a>').code).toBe('xml.doctype');
    expect(refused('<a>\u0000</a>').code).toBe('xml.encoding');
    expect(refused(`<a>${'x'.repeat(200)}`, xmlLimits({ maxBytes: 100 })).code).toBe('xml.too_large');
    expect(refused('<d>'.repeat(10_000)).code).toBe('xml.too_deep');
    expect(refused(`text <d>${'<d>'.repeat(100)}`).code).toBe('xml.too_deep');
    expect(refused('<a>0123456789ab', xmlLimits({ maxTextLength: 10 })).code).toBe('xml.text_too_long');
  });

  it('counts the elements of every payload it salvages against one maxElements budget', () => {
    const limits = xmlLimits({ maxElements: 4 });
    expect(repairPayloads('<a/><b/><c/><d/>', limits)).toHaveLength(4);
    // Clean roots, the lenient scan, and code fences each holding some: all count together.
    expect(refused('<a/><b/><c/><d/><e/>', limits).code).toBe('xml.too_many_elements');
    expect(refused('prose <a/> & <b/><c/><d/><e/>', limits).code).toBe('xml.too_many_elements');
    expect(refused('<a><b><c><d><e>unclosed', limits).code).toBe('xml.too_many_elements');
    const fences = '```xml\n<a/><b/><c/>\n```\nand\n```xml\n<d/><e/>\n```';
    expect(refused(fences, limits).message).toMatch(/more than 4 elements.*limits\.max_xml_elements/);
    expect(repairPayloads('```xml\n<a/><b/>\n```\n```xml\n<c/><d/>\n```', limits)).toHaveLength(4);
    // A model's output of a million empty elements is refused, not turned into a million payloads.
    expect(refused('<b/>'.repeat(250_000)).code).toBe('xml.too_many_elements');
    expect(refused(`Sure: ${'<b/>'.repeat(250_000)} & more`).code).toBe('xml.too_many_elements');
  });
});
