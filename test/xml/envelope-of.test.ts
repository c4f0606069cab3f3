/**
 * parseEnvelopeOf (a delivery's parse of the envelope publish wrote for its routing record) must
 * give exactly what parseEnvelope gives, result or refusal, for what publish writes and for every
 * envelope it did not write.
 */
import { describe, expect, it } from 'vitest';
import { ownTraceparent } from '../../src/telemetry/traceparent.ts';
import { buildEnvelope, ENVELOPE_NS, type EnvelopeMeta, parseEnvelope } from '../../src/xml/envelope.ts';
import { parseEnvelopeOf } from '../../src/xml/envelope-of.ts';
import { DEFAULT_XML_LIMITS as L, type XmlLimits } from '../../src/xml/limits.ts';

const THREAD = '2b1c7a3e-5f0d-4a8b-9c61-0e2d4f7b8a91';
const META: EnvelopeMeta = { from: 'greeter', to: 'shouter', thread: THREAD };
const HEAD = `<message xmlns="${ENVELOPE_NS}"><meta><from>greeter</from><to>shouter</to><thread>${THREAD}</thread></meta>`;

type Outcome = { ok: ReturnType<typeof parseEnvelope> } | { error: string };

function outcome(parse: () => ReturnType<typeof parseEnvelope>): Outcome {
  try {
    const { node, ...rest } = parse();
    return {
      ok: {
        ...rest,
        node: {
          name: node.name,
          ns: node.ns,
          attrs: { ...node.attrs },
          text: node.text,
          kids: node.children.map((k) => [k.name, k.ns, k.text]),
        } as never,
      },
    };
  } catch (error) {
    const e = error as { code?: string; message: string };
    return { error: `${e.code}: ${e.message}` };
  }
}

function same(text: string, meta: EnvelopeMeta = META, limits: XmlLimits = L): Outcome {
  const whole = outcome(() => parseEnvelope(text, limits));
  expect(outcome(() => parseEnvelopeOf(text, meta, limits))).toEqual(whole);
  return whole;
}

describe('parseEnvelopeOf', () => {
  it('reads what buildEnvelope wrote as parseEnvelope does: payloads, namespaces, prefixes, references', () => {
    const payloads = [
      '<shout><text>Hi &amp; bye</text></shout>',
      '<shout xmlns="urn:x"><text>own namespace</text></shout>',
      '<p:shout xmlns:p="urn:p"><p:text>prefixed</p:text></p:shout>',
      '<shout a="1" b=\'2\'><![CDATA[<raw>]]><n>3</n></shout>',
      '<shout>\r\n<text>line\r\nends</text></shout>',
      '<empty/>',
    ];
    for (const payload of payloads) {
      const result = same(buildEnvelope(META, payload));
      expect('ok' in result).toBe(true);
      // And without a <to>, as a reply to an ingress is written.
      same(buildEnvelope({ from: 'greeter', thread: THREAD }, payload), {
        from: 'greeter',
        to: '',
        thread: THREAD,
      });
    }
  });

  it('reads a traceparent publish wrote (tracing on) as parseEnvelope does, and any other as parseEnvelope', () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const payload = '<shout><text>Hi</text></shout>';
    const result = same(buildEnvelope({ ...META, traceparent }, payload));
    expect(result).toMatchObject({ ok: { traceparent, from: 'greeter', to: 'shouter', tag: 'shout' } });
    same(buildEnvelope({ from: 'greeter', thread: THREAD, traceparent }, payload), {
      from: 'greeter',
      to: '',
      thread: THREAD,
    });
    // Values the fast path leaves to parseEnvelope: upper case, spaces, a reference, empty, unclosed.
    for (const value of [traceparent.toUpperCase(), ` ${traceparent} `, `${traceparent}&amp;`, ''])
      same(
        buildEnvelope(META, payload).replace(
          '</thread>',
          `</thread><traceparent xmlns="urn:organism:trace-context:1">${value}</traceparent>`,
        ),
      );
    same(
      buildEnvelope(META, payload).replace(
        '</thread>',
        '</thread><traceparent xmlns="urn:organism:trace-context:1">00-0a',
      ),
    );
    // A limit on text shorter than the traceparent: refused alike.
    same(buildEnvelope({ ...META, traceparent }, payload), META, { ...L, maxTextLength: 50 });
    // A hop span's own (written and read back without a check of its characters): the same
    // envelope, read alike, and held to the text limit alike.
    const own = ownTraceparent('0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331', 1);
    const built = buildEnvelope({ ...META, traceparent: own }, payload);
    expect(built).toBe(buildEnvelope({ ...META, traceparent }, payload));
    same(buildEnvelope({ ...META, traceparent: own }, payload));
    same(buildEnvelope({ ...META, traceparent: own }, payload), META, { ...L, maxTextLength: 50 });
  });

  it('reads the envelope just built (the payload as given, in memory) as parseEnvelope reads it', () => {
    // parseEnvelopeOf right after buildEnvelope finds the payload it was given (one slot): each of
    // these must still come out as the whole envelope's parse, result or refusal.
    const payloads = [
      '<!--c--><a/>',
      '<?pi x?><a/>',
      '<a/>  ',
      '<a/><!-- after -->',
      '<a/>junk',
      '<a/><b/>',
      '<a xmlns=""/>',
      '<a b="1" xmlns="urn:x"/>',
      "<a b='1' c=\"2\"><d e='3'/></a>",
      '<p:a xmlns:p="urn:p" p:b="1"><p:c/></p:a>',
      '<q:a/>',
      '\ufeff<a><b>x</b></a>',
      '<a>\r\n<b>x\ry</b></a>',
      '<a xmlns:xmlns="urn:x"/>',
      '<a b="1" b="2"/>',
    ];
    for (const payload of payloads) {
      let text: string;
      try {
        text = buildEnvelope(META, payload);
      } catch {
        continue; // buildEnvelope refuses it: nothing to deliver
      }
      // parseEnvelope first: it must not disturb what parseEnvelopeOf finds.
      same(text);
    }
    // Meta values are escaped as given, whatever was escaped (or refused) before them.
    expect(() => buildEnvelope({ ...META, from: 'a\u0001' }, '<x/>')).toThrow(/cannot be represented/);
    expect(buildEnvelope({ ...META, from: 'a&b' }, '<x/>')).toContain('<from>a&amp;b</from>');
    expect(buildEnvelope({ ...META, from: 'a&b' }, '<x/>')).toContain('<from>a&amp;b</from>');
    expect(buildEnvelope({ ...META, from: 'ab' }, '<x/>')).toContain('<from>ab</from>');
    // The slot holds the last one built: an envelope built before it is read from its text.
    const first = buildEnvelope(META, '<a n="1"/>');
    buildEnvelope(META, '<b/>');
    expect(same(first)).toMatchObject({ ok: { tag: 'a', payloadXml: '<a n="1"/>' } });
    // Attributes at the limit: the root's with the xmlns="" the envelope adds, a child's without.
    const limits: XmlLimits = { ...L, maxAttributes: 2 };
    for (const payload of [
      '<a x="1"/>',
      '<a x="1" y="2"/>',
      '<a><b x="1" y="2"/></a>',
      '<a><b x="1" y="2" z="3"/></a>',
    ])
      same(buildEnvelope(META, payload), META, limits);
  });

  it('gives parseEnvelope its way with envelopes written otherwise, or for another record', () => {
    const built = buildEnvelope(META, '<shout><text>Hi</text></shout>');
    const cases = [
      // Another record than the one written: the mismatch is the caller's to see, as before.
      [built, { ...META, from: 'someone' }],
      [built, { ...META, thread: 'other' }],
      [built, { ...META, to: undefined }],
      // Hand-written: the payload inherits the envelope namespace; spacing; a traceparent.
      [`${HEAD}<shout><text>Hi</text></shout></message>`, META],
      [`${HEAD}\n  <shout xmlns=""><text>Hi</text></shout>\n</message>`, META],
      [
        `${HEAD.replace('</meta>', '<traceparent xmlns="urn:organism:trace-context:1">00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01</traceparent></meta>')}<shout xmlns=""/></message>`,
        META,
      ],
      // Meta values that need escaping or that a parse would trim.
      [buildEnvelope({ ...META, from: 'a&b' }, '<x/>'), { ...META, from: 'a&b' }],
      [buildEnvelope({ ...META, from: ' greeter' }, '<x/>'), { ...META, from: ' greeter' }],
    ] as const;
    for (const [text, meta] of cases) same(text, meta);
  });

  it('refuses what parseEnvelope refuses, with its words', () => {
    const bad = [
      `${HEAD}<a xmlns=""/><b xmlns=""/></message>`,
      `${HEAD}<a xmlns=""/>text</message>`,
      `${HEAD}</message>`,
      `${HEAD}<a xmlns=""><b></a></message>`,
      `${HEAD}<?xml version="1.0"?><a xmlns=""/></message>`,
      `${HEAD}<a xmlns=""/></message><message/>`,
      `${HEAD}<a xmlns="">\u0000</a></message>`,
      `${HEAD}<!DOCTYPE a><a xmlns=""/></message>`,
      `${HEAD}<a xmlns=""/><![CDATA[ ]]></message>`,
      `${HEAD}<a xmlns=""/><![CDATA[x]]></message>`,
    ];
    for (const text of bad) same(text);
  });

  it('holds the payload to the same depth, element, attribute, text and size limits', () => {
    const limits: XmlLimits = {
      ...L,
      maxDepth: 4,
      maxElements: 3,
      maxAttributes: 2,
      maxTextLength: 40,
      maxBytes: 400,
    };
    const payloads = [
      '<a><b><c/></b></a>', // depth 4 with <message>: at the limit
      '<a><b><c><d/></c></b></a>', // one deeper
      '<a><b/><c/></a>', // 3 elements: at the limit
      '<a><b/><c/><d/></a>',
      '<a x="1" y="2"/>',
      '<a x="1" y="2" z="3"/>',
      `<a>${'x'.repeat(40)}</a>`,
      `<a>${'x'.repeat(41)}</a>`,
    ];
    for (const payload of payloads) same(buildEnvelope(META, payload), META, limits);
    // The envelope over the byte limit, the payload alone under it.
    same(buildEnvelope(META, `<a>${'x'.repeat(30)}</a>`), META, { ...L, maxBytes: 150 });
    // Limits the envelope itself does not pass: its depth, its xmlns attribute, its texts.
    for (const tight of [
      { maxDepth: 2 },
      { maxDepth: 3 },
      { maxAttributes: 0 },
      { maxTextLength: 10 },
      { maxTextLength: 38 },
    ]) {
      same(buildEnvelope(META, '<a/>'), META, { ...L, ...tight });
    }
  });
});
