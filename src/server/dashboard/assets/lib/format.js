// Small formatters and readers of the records' XML payloads.

export function age(iso, now = Date.now()) {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d`;
}

// One formatter for every clock on the page: Date#toLocaleTimeString builds a new one per call,
// which cost about 0.1 ms each, a tenth of a second for a 1,000-message thread.
const CLOCK = new Intl.DateTimeFormat([], {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hour12: false,
});

export function clock(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : CLOCK.format(d);
}

export function shortId(id) {
  return id.length > 13 ? `${id.slice(0, 8)}…` : id;
}

// Number formatters by digits, made once (toLocaleString with options makes one per call).
const NUMBERS = new Map();

export function number(n, digits = 0) {
  if (n === undefined || n === null || Number.isNaN(n)) return '–';
  let format = NUMBERS.get(digits);
  if (!format) {
    format = new Intl.NumberFormat(undefined, { maximumFractionDigits: digits });
    NUMBERS.set(digits, format);
  }
  return format.format(n);
}

const ENTITIES = { '&lt;': '<', '&gt;': '>', '&quot;': '"', '&apos;': "'", '&amp;': '&' };

export function unescapeXml(text) {
  return text.replace(/&(?:lt|gt|quot|apos|amp);/g, (e) => ENTITIES[e]);
}

const FIELD_PATTERNS = new Map();

/** The text of the first `<tag>` in `xml` (unescaped), or undefined; `<tag/>` is ''. */
export function field(xml, tag) {
  let pattern = FIELD_PATTERNS.get(tag);
  if (!pattern) {
    pattern = new RegExp(`<${tag}(?:\\s[^>]*)?(?:/>|>([\\s\\S]*?)</${tag}>)`);
    FIELD_PATTERNS.set(tag, pattern);
  }
  const open = pattern.exec(xml);
  if (!open) return undefined;
  return unescapeXml(open[1] ?? '');
}

/** JSON inside a field, or the text itself when it is not JSON. */
export function jsonField(xml, tag) {
  const text = field(xml, tag);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Indented XML text, one element per line, an element holding only text kept on its line. A
 * reader for people: it does not check the XML (the bus did).
 */
export function prettyXml(xml) {
  const tokens = xml.split(/(<[^>]+>)/).filter((t) => t.trim() !== '');
  const lines = [];
  let depth = 0;
  const pad = () => '  '.repeat(depth);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.startsWith('</')) {
      depth = Math.max(0, depth - 1);
      lines.push(pad() + t);
    } else if (t.startsWith('<?') || t.startsWith('<!') || t.endsWith('/>')) {
      lines.push(pad() + t);
    } else if (t.startsWith('<')) {
      const text = tokens[i + 1];
      const close = tokens[i + 2];
      if (text !== undefined && !text.startsWith('<') && close?.startsWith('</')) {
        lines.push(pad() + t + text.trim() + close);
        i += 2;
      } else {
        lines.push(pad() + t);
        depth++;
      }
    } else {
      lines.push(pad() + t.trim());
    }
  }
  return lines.join('\n');
}

/** Prometheus text -> [{name, labels, value}]. */
export function parseMetrics(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}
