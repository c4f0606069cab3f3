import { describe, expect, it } from 'vitest';
import { XmlError } from '../../src/errors.ts';
import { buildEnvelope, parseEnvelope } from '../../src/xml/envelope.ts';
import { DEFAULT_XML_LIMITS, type XmlLimits, xmlLimits } from '../../src/xml/limits.ts';
import { decodeUtf8Strict, parsePayload } from '../../src/xml/parse.ts';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const L = DEFAULT_XML_LIMITS;

function refusal(text: string, limits: XmlLimits = L): XmlError {
  try {
    parsePayload(text, limits);
  } catch (err) {
    expect(err).toBeInstanceOf(XmlError);
    return err as XmlError;
  }
  throw new Error(`expected a refusal for ${JSON.stringify(text.slice(0, 80))}`);
}

describe('parsePayload', () => {
  it('parses one element with text, attributes, children, CDATA, comments and references', () => {
    const p = parsePayload(
      '<?xml version="1.0" encoding="UTF-8"?>\n<!-- lead --><note id="7" lang=\'en\'>' +
        '<to>Ada</to><body>1 &lt; 2 &amp;&#32;&#x41;<![CDATA[<raw> & stuff]]></body></note>\n<?pi x?>\n',
      L,
    );
    expect(p.tag).toBe('note');
    expect(p.xml).toBe(
      '<note id="7" lang=\'en\'><to>Ada</to><body>1 &lt; 2 &amp;&#32;&#x41;<![CDATA[<raw> & stuff]]></body></note>',
    );
    expect(p.node.attrs).toEqual({ id: '7', lang: 'en' });
    expect(p.node.children.map((c) => c.name)).toEqual(['to', 'body']);
    expect(p.node.children[1]!.text).toBe('1 < 2 & A<raw> & stuff');
  });

  it('normalizes CRLF line ends and attribute whitespace as XML 1.0 says', () => {
    const p = parsePayload('<a b="x\ty\nz">line1\r\nline2\rline3</a>', L);
    expect(p.node.text).toBe('line1\nline2\nline3');
    expect(p.node.attrs.b).toBe('x y z');
  });

  it('resolves namespaces: default, prefixed, undeclared with xmlns=""', () => {
    const p = parsePayload('<r xmlns="urn:a" xmlns:b="urn:b"><x/><b:y/><z xmlns=""/></r>', L);
    expect(p.node.ns).toBe('urn:a');
    expect(p.node.children.map((c) => [c.local, c.ns])).toEqual([
      ['x', 'urn:a'],
      ['y', 'urn:b'],
      ['z', ''],
    ]);
    expect(refusal('<p:a/>').message).toMatch(/undeclared namespace prefix "p"/);
    expect(refusal('<a x:y="1"/>').message).toMatch(/undeclared namespace prefix "x" on attribute x:y/);
    for (const bad of ['<:a/>', '<a:/>', '<a:b:c xmlns:a="urn:a"/>']) {
      expect(refusal(bad).message, bad).toMatch(/not a valid namespaced name/);
    }
    expect(refusal('<a xmlns:p=""/>').message).toMatch(/cannot be undeclared/);
    // Bindings end with their element.
    expect(refusal('<r><a xmlns:p="urn:p"/><p:b/></r>').message).toMatch(
      /undeclared namespace prefix "p" on <p:b>/,
    );
  });

  it('treats attribute names like __proto__ as plain keys', () => {
    const p = parsePayload('<a __proto__="x" constructor="y"/>', L);
    expect(Object.entries(p.node.attrs)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]);
    // Nothing is inherited: a lookup of any name not written is undefined.
    expect(parsePayload('<a/>', L).node.attrs.constructor).toBeUndefined();
    expect(p.node.attrs.toString).toBeUndefined();
  });

  it('reads "]]>" and references in any text of the document, after ones in CDATA, attributes and earlier texts', () => {
    const p = parsePayload('<a x="&amp;"><![CDATA[]]]]><b>1 &lt; 2</b><c>none</c><d>&amp;&#65;</d></a>', L);
    expect(p.node.children.map((el) => el.text)).toEqual(['1 < 2', 'none', '&A']);
    expect(p.node.text).toBe(']]');
    for (const text of [
      '<a><![CDATA[x]]><b>y</b><c>z ]]> w</c></a>',
      '<a x="]]&gt;"><b>&amp;</b>]]></a>',
      '<a><b>]]</b>]]></a>',
    ]) {
      expect(refusal(text).message, text).toMatch(/"]]>" is not allowed in text/);
    }
    expect(refusal('<a x="&amp;"><b>&lt;</b>fish & chips</a>').message).toMatch(/bare "&"/);
  });

  it('parses a document afresh after one that was refused half-way (no open element or namespace left over)', () => {
    expect(refusal('<a xmlns:p="urn:x"><b><c>').message).toMatch(/is not closed/);
    expect(parsePayload('<d><e>x</e></d>', L).node.children[0]!.text).toBe('x');
    expect(refusal('<a xmlns:p="urn:x"><p:b>').message).toMatch(/is not closed/);
    expect(refusal('<p:c/>').message).toMatch(/undeclared namespace prefix "p"/);
  });

  it('refuses malformed XML with line and column', () => {
    const err = refusal('<a>\n  <b>text</c>\n</a>');
    expect(err.code).toBe('xml.malformed');
    expect(err.message).toMatch(
      /end tag <\/c> does not match <b> \(opened at line 2, column 3\) \(line 2, column 10\)/,
    );
    expect(err.details).toEqual({ line: 2, column: 10 });

    const cases: [string, RegExp][] = [
      ['<a>', /<a> .* is not closed/],
      ['<a x=1/>', /must be quoted/],
      ['<a x="1" x="2"/>', /duplicate attribute x/],
      ['<a>&nbsp;</a>', /undefined entity &nbsp;/],
      ['<a>fish & chips</a>', /bare "&"/],
      ['<a>a < b</a>', /"<" must start a tag/],
      ['<a b="<"/>', /"<" is not allowed in attribute values/],
      ['text <a/>', /text before the root element/],
      ['<a/> trailing', /text after the root element/],
      ['<a>]]></a>', /"]]>" is not allowed/],
      ['<a><!-- a -- b --></a>', /"--" is not allowed/],
      ['<a/><?xml version="1.0"?>', /XML declaration is only allowed at the very start/],
      ['</a>', /end tag without a matching start tag/],
    ];
    for (const [text, message] of cases) {
      const e = refusal(text);
      expect(e.code, text).toBe('xml.malformed');
      expect(e.message, text).toMatch(message);
      expect(e.message, text).toMatch(/\(line \d+, column \d+\)$/);
    }
  });

  it('refuses empty input and several roots with their own codes', () => {
    expect(refusal('').code).toBe('xml.empty');
    expect(refusal('  <!-- only a comment -->  ').code).toBe('xml.empty');
    const many = refusal('<a/><b/>');
    expect(many.code).toBe('xml.multiple_roots');
    expect(many.message).toMatch(/second root element <b>/);
  });

  it('refuses an encoding declaration other than UTF-8', () => {
    const err = refusal('<?xml version="1.0" encoding="ISO-8859-1"?><a/>');
    expect(err.code).toBe('xml.encoding');
    expect(parsePayload('<?xml version="1.0" encoding="utf-8"?><a/>', L).tag).toBe('a');
  });
});

describe('limits', () => {
  it('refuses documents over maxBytes, counting UTF-8 bytes', () => {
    const limits = xmlLimits({ maxBytes: 100 });
    const ascii = `<a>${'x'.repeat(100)}</a>`;
    const err = refusal(ascii, limits);
    expect(err.code).toBe('xml.too_large');
    expect(err.message).toMatch(/limit is 100 bytes/);
    // 40 characters of 3-byte UTF-8 are 120 bytes although the string is only 47 units long.
    const wide = `<a>${'€'.repeat(40)}</a>`;
    expect(wide.length).toBeLessThan(100);
    const e2 = refusal(wide, limits);
    expect(e2.code).toBe('xml.too_large');
    expect(e2.message).toMatch(/XML is 127 bytes; the limit is 100 bytes/);
    expect(parsePayload(`<a>${'€'.repeat(30)}</a>`, limits).node.text).toHaveLength(30);
  });

  it('refuses 10,000 nested elements at the depth limit without overflowing the stack', () => {
    const deep = '<d>'.repeat(10_000) + '</d>'.repeat(10_000);
    const err = refusal(deep);
    expect(err.code).toBe('xml.too_deep');
    expect(err.message).toMatch(/deeper than the limit of 64/);
    expect(err.details).toEqual({ line: 1, column: 64 * 3 + 1 });
    const ok = '<d>'.repeat(64) + '</d>'.repeat(64);
    expect(parsePayload(ok, L).tag).toBe('d');
    expect(refusal('<d>'.repeat(65) + '</d>'.repeat(65)).code).toBe('xml.too_deep');
  });

  it('refuses too many attributes on one element', () => {
    const attrs = (n: number) => Array.from({ length: n }, (_, i) => `a${i}="${i}"`).join(' ');
    expect(parsePayload(`<e ${attrs(64)}/>`, L).node.attrs.a63).toBe('63');
    const err = refusal(`<e ${attrs(65)}/>`);
    expect(err.code).toBe('xml.too_many_attributes');
    expect(err.message).toMatch(/<e> has more than 64 attributes/);
  });

  it('refuses text and attribute values over maxTextLength', () => {
    const limits = xmlLimits({ maxTextLength: 10 });
    expect(parsePayload('<a>0123456789</a>', limits).node.text).toBe('0123456789');
    const err = refusal('<a>01234567890</a>', limits);
    expect(err.code).toBe('xml.text_too_long');
    expect(err.message).toMatch(/text inside <a> is 11 characters; the limit is 10/);
    // Text split by comments and CDATA still counts as one element's text.
    expect(refusal('<a>012345<!-- -->67890</a>', limits).code).toBe('xml.text_too_long');
    expect(refusal('<a>012345<![CDATA[67890]]></a>', limits).code).toBe('xml.text_too_long');
    expect(refusal('<a v="01234567890"/>', limits).code).toBe('xml.text_too_long');
  });

  it('refuses more elements than maxElements (the root counts), stopping where the limit is passed', () => {
    const limits = xmlLimits({ maxElements: 5 });
    expect(parsePayload(`<a>${'<b/>'.repeat(4)}</a>`, limits).node.children).toHaveLength(4);
    const err = refusal(`<a>${'<b/>'.repeat(5)}</a>`, limits);
    expect(err.code).toBe('xml.too_many_elements');
    expect(err.message).toBe(
      'more than 5 elements, the limit for one message (limits.max_xml_elements) (line 1, column 20)',
    );
    expect(refusal(`<a>${'<b><c/></b>'.repeat(3)}</a>`, limits).code).toBe('xml.too_many_elements');
    // Counted before the parse when nothing can hold a literal "<", by the parse otherwise: the same
    // refusal at the same place; a "<" in a comment or CDATA section is no element.
    const counted = refusal(`<a><!-- x -->${'<b/>'.repeat(5)}</a>`, limits);
    expect(counted.code).toBe('xml.too_many_elements');
    expect(counted.details).toEqual({ line: 1, column: 30 });
    expect(refusal(`<a>${'<b/>'.repeat(5)}</a>`, limits).details).toEqual({ line: 1, column: 20 });
    const quoted = `<a><!-- <b><b><b><b><b><b> --><![CDATA[<c><c><c><c><c>]]>${'<b/>'.repeat(4)}</a>`;
    expect(parsePayload(quoted, limits).node.children).toHaveLength(4);
    // The default: a 1 MB flood of empty elements is refused near its start.
    const flood = `<a>${'<b/>'.repeat(250_000)}</a>`;
    const refused = refusal(flood);
    expect(refused.code).toBe('xml.too_many_elements');
    expect(refused.details).toEqual({ line: 1, column: 4 + 4 * 9_999 });
  });
});

describe('parseEnvelope and maxElements', () => {
  it('allows the envelope its own elements on top of a payload at the limit', () => {
    const limits = xmlLimits({ maxElements: 3 });
    const payload = '<a><b/><c/></a>';
    const envelope = buildEnvelope({ from: 'x', to: 'y', thread: 't', traceparent: TRACEPARENT }, payload);
    expect(parseEnvelope(envelope, limits).payloadXml).toBe(payload);
    const over = buildEnvelope({ from: 'x', thread: 't' }, '<a><b/><c/><d/></a>');
    expect(() => parseEnvelope(over, limits)).toThrow(/more than 3 elements/);
  });
});

describe('DTDs and entities', () => {
  it('refuses XXE before anything is read', () => {
    const err = refusal('<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><x>&xxe;</x>');
    expect(err.code).toBe('xml.doctype');
    expect(err.message).toMatch(/DOCTYPE declarations are not accepted/);
  });

  it('refuses billion laughs', () => {
    const lol =
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">' +
      Array.from(
        { length: 9 },
        (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`,
      ).join('') +
      ']><lolz>&lol9;</lolz>';
    expect(refusal(lol).code).toBe('xml.doctype');
  });

  it('refuses entity declarations and DOCTYPE in any case, anywhere', () => {
    expect(refusal('<!doctype html><a/>').code).toBe('xml.doctype');
    expect(refusal('<a><!ENTITY e "x"></a>').code).toBe('xml.doctype');
    // An undefined entity is never looked up anywhere: it is malformed.
    expect(refusal('<a>&xxe;</a>').code).toBe('xml.malformed');
  });
});

describe('encoding', () => {
  it('refuses NUL, forbidden control characters and lone surrogates', () => {
    const nul = refusal('<a>x\u0000y</a>');
    expect(nul.code).toBe('xml.encoding');
    expect(nul.message).toMatch(/NUL character \(U\+0000\).*\(line 1, column 5\)/);
    expect(refusal('<a>\u0007</a>').message).toMatch(/U\+0007/);
    const lone = refusal('<a>\ud83d</a>');
    expect(lone.code).toBe('xml.encoding');
    expect(lone.message).toMatch(/lone surrogate U\+D83D/);
    expect(refusal('<a>\udc00x</a>').code).toBe('xml.encoding');
    expect(parsePayload('<a>😀</a>', L).node.text).toBe('😀');
    // Character references to forbidden characters are refused too.
    expect(refusal('<a>&#0;</a>').code).toBe('xml.encoding');
    expect(refusal('<a>&#xD800;</a>').code).toBe('xml.encoding');
  });

  it('decodeUtf8Strict refuses invalid UTF-8 with the byte offset', () => {
    expect(decodeUtf8Strict(new TextEncoder().encode('<a>é😀</a>'))).toBe('<a>é😀</a>');
    expect(decodeUtf8Strict(new Uint8Array([0xef, 0xbb, 0xbf, 0x3c, 0x61, 0x2f, 0x3e]))).toBe('<a/>');
    const cases: [number[], number][] = [
      [[0x3c, 0x61, 0x3e, 0xff, 0x3c], 3], // never valid
      [[0x61, 0xc0, 0xaf], 1], // overlong "/"
      [[0x61, 0x62, 0xed, 0xa0, 0x80], 2], // encoded surrogate
      [[0x61, 0xe2, 0x82], 1], // truncated
      [[0x80], 0], // lone continuation byte
    ];
    for (const [bytes, offset] of cases) {
      try {
        decodeUtf8Strict(new Uint8Array(bytes));
        throw new Error(`accepted ${bytes}`);
      } catch (err) {
        expect(err).toBeInstanceOf(XmlError);
        expect((err as XmlError).code).toBe('xml.encoding');
        expect((err as XmlError).message).toBe(`invalid UTF-8 byte sequence at byte offset ${offset}`);
      }
    }
  });

  it('decodeUtf8Strict checks the byte limit before decoding', () => {
    expect(() => decodeUtf8Strict(new Uint8Array(101), xmlLimits({ maxBytes: 100 }))).toThrow(
      /XML is 101 bytes; the limit is 100 bytes/,
    );
  });
});

describe('xmlLimits', () => {
  it('fills defaults and refuses nonsense', () => {
    expect(xmlLimits({ maxDepth: 8 })).toEqual({ ...DEFAULT_XML_LIMITS, maxDepth: 8 });
    expect(DEFAULT_XML_LIMITS).toEqual({
      maxBytes: 1048576,
      maxDepth: 64,
      maxAttributes: 64,
      maxTextLength: 1048576,
      maxElements: 10000,
    });
    expect(() => xmlLimits({ maxDepth: 0 })).toThrow(/maxDepth must be a positive integer/);
  });
});
