import { parseXmlDocument } from 'slimdom';
import { describe, expect, it } from 'vitest';
import { XmlError } from '../../src/errors.ts';
import { decodePayload, encodePayload } from '../../src/xml/codec.ts';
import { buildEnvelope, ENVELOPE_NS, parseEnvelope } from '../../src/xml/envelope.ts';
import { DEFAULT_XML_LIMITS as L, xmlLimits } from '../../src/xml/limits.ts';
import { compileValidator } from '../../src/xml/validate.ts';

const THREAD = '2b1c7a3e-5f0d-4a8b-9c61-0e2d4f7b8a91';

function envelopeError(text: string): XmlError {
  try {
    parseEnvelope(text, L);
  } catch (err) {
    expect(err).toBeInstanceOf(XmlError);
    return err as XmlError;
  }
  throw new Error('expected a refusal');
}

describe('buildEnvelope / parseEnvelope', () => {
  it('writes the xml-pipeline wire format', () => {
    const env = buildEnvelope(
      { from: 'greeter', to: 'shouter', thread: THREAD },
      '<shout><text>Hi</text></shout>',
    );
    expect(env).toBe(
      `<message xmlns="${ENVELOPE_NS}"><meta><from>greeter</from><to>shouter</to><thread>${THREAD}</thread></meta>` +
        '<shout xmlns=""><text>Hi</text></shout></message>',
    );
    expect(buildEnvelope({ from: 'a', thread: 't' }, '<x/>')).toBe(
      `<message xmlns="${ENVELOPE_NS}"><meta><from>a</from><thread>t</thread></meta><x xmlns=""/></message>`,
    );
  });

  it('round-trips meta, tag and payload text', () => {
    const payloads = [
      '<shout><text>Hello, Ada! &amp; &lt;friends&gt; “quoted” 😀</text></shout>',
      '<x/>',
      '<calc expr="1 &lt; 2" mode=\'fast\'>\n  <n>1</n>\n</calc>',
      '<p:order xmlns:p="urn:shop"><p:item>3</p:item></p:order>',
      '<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title></feed>',
    ];
    for (const payload of payloads) {
      for (const meta of [
        { from: 'a', to: 'b', thread: THREAD },
        { from: 'a & b', thread: '<t>' },
      ]) {
        const parsed = parseEnvelope(buildEnvelope(meta, payload), L);
        expect(parsed.from).toBe(meta.from);
        expect(parsed.to).toBe(meta.to);
        expect(parsed.thread).toBe(meta.thread);
        expect(parsed.payloadXml).toBe(payload);
        expect(parsed.tag).toBe(payload.match(/^<(?:\w+:)?(\w+)/)![1]);
        expect(parsed.node.local).toBe(parsed.tag);
      }
    }
  });

  it('keeps the payload out of the envelope namespace for a namespace-aware reader', () => {
    const env = buildEnvelope({ from: 'a', thread: 't' }, '<shout><text>Hi</text></shout>');
    // An independent, namespace-aware DOM parser.
    const doc = parseXmlDocument(env);
    const message = doc.documentElement!;
    expect(message.namespaceURI).toBe(ENVELOPE_NS);
    const payload = message.children[1]!;
    expect(payload.localName).toBe('shout');
    expect(payload.namespaceURI).toBeNull();
    expect(payload.children[0]!.namespaceURI).toBeNull();
    // Our own parser agrees.
    const parsed = parseEnvelope(env, L);
    expect(parsed.node.ns).toBe('');
    expect(parsed.node.children[0]!.ns).toBe('');
  });

  it('keeps a payload namespace of its own', () => {
    const payload = '<order xmlns="urn:shop"><item>3</item></order>';
    const env = buildEnvelope({ from: 'a', thread: 't' }, payload);
    expect(env).toContain(payload);
    const doc = parseXmlDocument(env);
    expect(doc.documentElement!.children[1]!.namespaceURI).toBe('urn:shop');
    const parsed = parseEnvelope(env, L);
    expect(parsed.node.ns).toBe('urn:shop');
    expect(parsed.node.children[0]!.ns).toBe('urn:shop');
    expect(parsed.payloadXml).toBe(payload);
  });

  it('accepts a hand-written envelope whose payload has no xmlns="" and one with the thread missing', () => {
    const parsed = parseEnvelope(
      `<?xml version="1.0"?>\n<message xmlns="${ENVELOPE_NS}">\n  <meta>\n    <from> cli </from>\n  </meta>\n` +
        '  <greeting><name>Ada</name></greeting>\n</message>\n',
      L,
    );
    expect(parsed).toMatchObject({ from: 'cli', thread: '', tag: 'greeting' });
    expect(parsed.to).toBeUndefined();
    expect(parsed.payloadXml).toBe('<greeting><name>Ada</name></greeting>');
  });

  it('carries prefixes declared on <message> onto the payload', () => {
    const parsed = parseEnvelope(
      `<e:message xmlns:e="${ENVELOPE_NS}" xmlns:s="urn:shop"><e:meta><e:from>a</e:from></e:meta>` +
        '<s:order><s:item>1</s:item></s:order></e:message>',
      L,
    );
    expect(parsed.tag).toBe('order');
    expect(parsed.payloadXml).toBe(
      `<s:order xmlns:e="${ENVELOPE_NS}" xmlns:s="urn:shop"><s:item>1</s:item></s:order>`,
    );
    expect(parseXmlDocument(parsed.payloadXml).documentElement!.namespaceURI).toBe('urn:shop');
  });

  it('refuses what is not an envelope', () => {
    const meta = '<meta><from>a</from></meta>';
    const cases: [string, RegExp][] = [
      ['<message><meta><from>a</from></meta><x/></message>', /root element must be <message xmlns=/],
      [`<msg xmlns="${ENVELOPE_NS}">${meta}<x/></msg>`, /got <msg>/],
      [`<message xmlns="${ENVELOPE_NS}">${meta}</message>`, /carries no payload element/],
      [`<message xmlns="${ENVELOPE_NS}">${meta}<x/><y/></message>`, /2 payload elements; exactly one/],
      [`<message xmlns="${ENVELOPE_NS}"><x/>${meta}</message>`, /must start with <meta>/],
      [`<message xmlns="${ENVELOPE_NS}"><meta><to>b</to></meta><x/></message>`, /has no <from>/],
      [
        `<message xmlns="${ENVELOPE_NS}"><meta><from>a</from><from>b</from></meta><x/></message>`,
        /repeated <from>/,
      ],
      [`<message xmlns="${ENVELOPE_NS}"><meta><from><b>a</b></from></meta><x/></message>`, /text only/],
      [`<message xmlns="${ENVELOPE_NS}">hello${meta}<x/></message>`, /text directly inside <message>/],
    ];
    for (const [text, message] of cases) {
      const err = envelopeError(text);
      expect(err.code, text).toBe('xml.envelope');
      expect(err.message, text).toMatch(message);
    }
  });

  it('ignores meta extensions in other namespaces, as the XSD allows', () => {
    const parsed = parseEnvelope(
      `<message xmlns="${ENVELOPE_NS}"><meta><from>a</from><x:prio xmlns:x="urn:x">1</x:prio></meta><p/></message>`,
      L,
    );
    expect(parsed.from).toBe('a');
  });

  it('applies the parse limits and refusals to envelopes', () => {
    const deep = '<d>'.repeat(100) + '</d>'.repeat(100);
    const env = buildEnvelope({ from: 'a', thread: 't' }, deep);
    expect(() => parseEnvelope(env, L)).toThrow(/deeper than the limit of 64/);
    expect(() => parseEnvelope(env, xmlLimits({ maxBytes: 64 }))).toThrow(/limit is 64 bytes/);
    expect(envelopeError(`<!DOCTYPE m><message xmlns="${ENVELOPE_NS}"/>`).code).toBe('xml.doctype');
  });

  it('carries one pipeline pass: parse, decode, validate, encode, wrap', () => {
    const schema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
    const inbound = buildEnvelope(
      { from: 'greeter', to: 'shouter', thread: THREAD },
      '<shout><text>Hello, Ada!</text></shout>',
    );
    const parsed = parseEnvelope(inbound, L);
    const value = decodePayload(parsed.node, schema);
    expect(compileValidator('shout', schema)(value)).toBeNull();
    const reply = encodePayload('shout', { text: String(value.text).toUpperCase() }, schema);
    const outbound = buildEnvelope({ from: 'shouter', to: 'printer', thread: parsed.thread }, reply);
    expect(parseEnvelope(outbound, L)).toMatchObject({
      from: 'shouter',
      to: 'printer',
      thread: THREAD,
      tag: 'shout',
      payloadXml: '<shout><text>HELLO, ADA!</text></shout>',
    });
  });

  it('refuses a payload that is not an element', () => {
    expect(() => buildEnvelope({ from: 'a', thread: 't' }, 'hello')).toThrow(/one XML element/);
  });
});
