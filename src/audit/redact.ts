/**
 * Secrets never reach the audit log (invariant 7): values under secret-looking keys are replaced,
 * and strings are scrubbed of things that look like credentials wherever they appear.
 *
 * Besides shapes, the daemon knows its own secret values (LLM keys, the SMTP password, API tokens,
 * the audit key: whatever a secret-looking `*_env` key of organism.yaml names or `${VAR}` it
 * interpolates). They are registered once in `knownSecrets` when the config is loaded (and again
 * when a reload applies), and every redaction point (this module's `redactString` / `redact`, the
 * log, provider errors and replies, agent answers, tool calls and results in the thread history,
 * what a model is shown) uses the one matcher compiled from them. It catches more than the exact
 * value: see `secretForms`.
 */
import { Buffer } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { loadDotEnv } from '../config/env.ts';
import { setOwn } from '../plain-object.ts';
import { decodeEscapes, worthDecoding } from './escapes.ts';

export const REDACTED = '[REDACTED]';

/** Shortest piece of a secret (a prefix, or a run of its base64) that is redacted on its own. */
export const MIN_SECRET_PREFIX = 8;
/** Values shorter than this are never registered: redacting them would eat ordinary text. */
export const MIN_SECRET_LENGTH = 4;

/** One form of a secret, lower-cased; any prefix of it at least `min` characters long is caught. */
export interface SecretForm {
  text: string;
  min: number;
  /** A hex form: matched in a pass of its own, only over texts with a run of hex digits that long. */
  hex?: boolean;
}

/**
 * The forms a value can leak in, each matched case-insensitively and, when long enough, by any
 * prefix of 8 or more characters (a server that echoes "the first 20 characters of your key"):
 * - the value itself;
 * - the value without a leading vendor prefix (`sk-`, `sk-ant-`, `sk-ant-api03-`, `ghp_`, ...: every
 *   cut after a `-` or `_` in its first 20 characters that leaves 8 or more characters);
 * - the base64 and base64url encodings of each of those, at the three byte alignments a value can
 *   have inside a longer encoded text (`Basic base64(user:key)`), so a prefix of the encoding of
 *   the value, or of the value within a longer string, is caught too;
 * - the value as JSON writes it, when that differs (quotes, backslashes);
 * - the hex of each of those (upper, lower or mixed case), by any prefix of 16 or more digits
 *   (8 bytes of the value, as for the plain forms).
 * Escaped forms (%XX, HTML character references, \uXXXX, \xNN, any mix) are found by matching a
 * decoded view of the text (escapes.ts), not as forms here.
 * A value shorter than 8 characters is caught whole (and its whole base64 and hex), never by prefix.
 */
export function secretForms(secret: string): SecretForm[] {
  if (secret.length < MIN_SECRET_LENGTH) return [];
  const forms = new Map<string, number>();
  const hexForms = new Map<string, number>();
  const add = (text: string, min: number, into = forms) => {
    const lower = text.toLowerCase();
    const known = into.get(lower);
    if (known === undefined || min < known) into.set(lower, min);
  };
  const short = secret.length < MIN_SECRET_PREFIX;
  const bases = [secret];
  if (!short) {
    for (let i = 1; i < Math.min(secret.length, 21); i++) {
      const c = secret[i - 1];
      if ((c === '-' || c === '_') && secret.length - i >= MIN_SECRET_PREFIX) bases.push(secret.slice(i));
    }
  }
  for (const base of bases) {
    add(base, short ? base.length : MIN_SECRET_PREFIX);
    const escaped = JSON.stringify(base).slice(1, -1);
    if (escaped !== base) add(escaped, short ? escaped.length : MIN_SECRET_PREFIX);
    const bytes = Buffer.from(base, 'utf8');
    const hex = bytes.toString('hex');
    add(hex, short ? hex.length : 2 * MIN_SECRET_PREFIX, hexForms);
    for (let align = 0; align < (short ? 1 : 3); align++) {
      const rest = bytes.subarray(align);
      // Aligned 0 the value may end the encoded text, so its last partial group counts too;
      // otherwise only whole groups are the value's alone.
      const take = align === 0 ? rest : rest.subarray(0, rest.length - (rest.length % 3));
      const encoded = take.toString('base64').replace(/=+$/, '');
      if (encoded.length < (short ? MIN_SECRET_LENGTH : MIN_SECRET_PREFIX)) continue;
      const min = short ? encoded.length : MIN_SECRET_PREFIX;
      add(encoded, min);
      add(encoded.replace(/\+/g, '-').replace(/\//g, '_'), min);
    }
  }
  return [
    ...[...forms].map(([text, min]) => ({ text, min })),
    ...[...hexForms].filter(([text]) => !forms.has(text)).map(([text, min]) => ({ text, min, hex: true })),
  ];
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/**
 * A compiled matcher for a set of secret values: one case-insensitive regular expression over the
 * seeds (the first `min` characters of every form), and each hit extended to the longest prefix of
 * a form that the text holds there. Compiled once; matching costs one regex scan per text.
 */
export class SecretMatcher {
  readonly #regex: RegExp | null;
  /**
   * The hex forms' seeds, apart: digits and a-f are everywhere in text, and as alternatives of the
   * main expression they made every scan twice as slow. They are looked for only in a text that
   * has a run of hex digits as long as the shortest seed (`#hexRun`), which most texts have not.
   */
  readonly #hexRegex: RegExp | null;
  /** Length of the shortest hex seed; 0 without any. */
  readonly #hexRun: number;
  /** Whether a secret holds one of & < > " ' (XML's entities then can write part of it). */
  readonly #entities: boolean;
  /** seed (lower-cased) -> the forms starting with it. */
  readonly #forms = new Map<string, string[]>();

  constructor(values: Iterable<string>) {
    const plain = new Set<string>();
    const hex = new Set<string>();
    let entities = false;
    for (const value of values) {
      if (/[&<>"']/.test(value)) entities = true;
      for (const form of secretForms(value)) {
        const seed = form.text.slice(0, form.min);
        const list = this.#forms.get(seed) ?? [];
        list.push(form.text);
        this.#forms.set(seed, list);
        (form.hex ? hex : plain).add(seed);
      }
    }
    this.#regex = alternation(plain);
    this.#hexRegex = alternation(hex);
    this.#hexRun = hex.size === 0 ? 0 : Math.min(...[...hex].map((seed) => seed.length));
    this.#entities = entities;
  }

  get empty(): boolean {
    return this.#regex === null;
  }

  /**
   * `text` with every form of every secret replaced, written plainly or with escapes (the whole
   * escaped span is replaced). The same string when nothing matched.
   */
  redact(text: string, replacement: string = REDACTED): string {
    const regex = this.#regex;
    if (regex === null || text.length < MIN_SECRET_LENGTH) return text;
    let out = this.#replace(this.#regex, text, replacement);
    if (hasHexRun(out, this.#hexRun)) out = this.#replace(this.#hexRegex, out, replacement);
    // The plain forms are gone from `out`: what its decoded view still holds was escaped.
    if (!worthDecoding(out, this.#entities)) return out;
    const view = decodeEscapes(out);
    if (view === null) return out;
    const escaped = [
      ...(this.#spans(this.#regex, view.text) ?? []),
      ...((hasHexRun(view.text, this.#hexRun) && this.#spans(this.#hexRegex, view.text)) || []),
    ];
    if (escaped.length === 0) return out;
    const spans = escaped.map(([start, end]) => view.original(start, end)).sort((a, b) => a[0] - b[0]);
    return replaceSpans(out, spans, replacement);
  }

  /** Whether `text` holds any form of any secret, written plainly or with escapes. */
  test(text: string): boolean {
    if (this.#regex === null) return false;
    if (this.#holds(text)) return true;
    if (!worthDecoding(text, this.#entities)) return false;
    const view = decodeEscapes(text);
    return view !== null && this.#holds(view.text);
  }

  #holds(text: string): boolean {
    const regex = this.#regex!;
    regex.lastIndex = 0;
    if (regex.test(text)) return true;
    if (!hasHexRun(text, this.#hexRun)) return false;
    this.#hexRegex!.lastIndex = 0;
    return this.#hexRegex!.test(text);
  }

  #replace(regex: RegExp | null, text: string, replacement: string): string {
    const spans = this.#spans(regex, text);
    return spans === null ? text : replaceSpans(text, spans, replacement);
  }

  /** [start, end) of every match of `regex`'s forms in `text`, in order, not overlapping; null for none. */
  #spans(regex: RegExp | null, text: string): Array<readonly [number, number]> | null {
    if (regex === null) return null;
    regex.lastIndex = 0;
    let match = regex.exec(text);
    if (match === null) return null;
    const spans: Array<readonly [number, number]> = [];
    while (match !== null) {
      const start = match.index;
      const end = this.#extend(text, start, match[0]);
      spans.push([start, end]);
      regex.lastIndex = end;
      match = regex.exec(text);
    }
    return spans;
  }

  /** End of the longest form matching at `start` (the seed matched already). */
  #extend(text: string, start: number, seed: string): number {
    let best = start + seed.length;
    for (const form of this.#forms.get(seed.toLowerCase()) ?? []) {
      let i = seed.length;
      while (i < form.length && start + i < text.length && text[start + i]!.toLowerCase() === form[i]) i++;
      if (start + i > best) best = start + i;
    }
    return best;
  }
}

const HEX_CODE = new Uint8Array(128);
for (const c of '0123456789abcdefABCDEF') HEX_CODE[c.charCodeAt(0)] = 1;
const isHexCode = (c: number) => c < 128 && HEX_CODE[c] === 1;

/**
 * Whether `text` has `length` hex digits in a row (never, for 0). Looks at every length-th
 * character first, as a text without such a run has a non-digit in every window: ~10x cheaper
 * than the equivalent regular expression, which backtracks at every digit.
 */
function hasHexRun(text: string, length: number): boolean {
  if (length === 0) return false;
  let i = length - 1;
  while (i < text.length) {
    if (!isHexCode(text.charCodeAt(i))) {
      i += length;
      continue;
    }
    let run = 1;
    while (run < length && isHexCode(text.charCodeAt(i - run))) run++;
    let next = i + 1;
    while (run < length && next < text.length && isHexCode(text.charCodeAt(next))) {
      run++;
      next++;
    }
    if (run >= length) return true;
    // text[next] is not a digit (or the end): a run can only end length characters after it.
    i = next + length;
  }
  return false;
}

/** One case-insensitive expression for the seeds, longest first; null for none. */
function alternation(seeds: Set<string>): RegExp | null {
  if (seeds.size === 0) return null;
  const sorted = [...seeds].sort((a, b) => b.length - a.length);
  return new RegExp(sorted.map(escapeRegExp).join('|'), 'gi');
}

function replaceSpans(
  text: string,
  spans: ReadonlyArray<readonly [number, number]>,
  replacement: string,
): string {
  let out = '';
  let copied = 0;
  for (const [start, end] of spans) {
    // Overlapping spans (a plain and a hex form, two escaped ones) are one replacement.
    if (start < copied) {
      if (end > copied) copied = end;
      continue;
    }
    out += text.slice(copied, start) + replacement;
    copied = end;
  }
  return out + text.slice(copied);
}

/**
 * The secret values this process holds, by source (`config:<path>` for what a config names, one
 * source per provider key, ...). Setting a source recompiles the matcher on next use; setting the
 * same values again changes nothing.
 */
export class KnownSecrets {
  readonly #sources = new Map<string, readonly string[]>();
  #matcher: SecretMatcher | null = null;

  /** Replaces the values of `source` (a reload passes the new config's values). */
  set(source: string, values: Iterable<string | undefined | null>): void {
    const list = [
      ...new Set(
        [...values].filter((v): v is string => typeof v === 'string' && v.length >= MIN_SECRET_LENGTH),
      ),
    ].sort();
    const old = this.#sources.get(source);
    if (old !== undefined && old.length === list.length && old.every((v, i) => v === list[i])) return;
    if (list.length === 0) {
      if (old === undefined) return;
      this.#sources.delete(source);
    } else this.#sources.set(source, list);
    this.#matcher = null;
  }

  /** Adds one value under its own source (idempotent): a provider's API key, say. */
  add(value: string | undefined): void {
    if (value !== undefined) this.set(`value:${value}`, [value]);
  }

  delete(source: string): void {
    if (this.#sources.delete(source)) this.#matcher = null;
  }

  /** Forgets every source (a test that needs a process knowing none). */
  clear(): void {
    this.#sources.clear();
    this.#matcher = null;
  }

  /** The compiled matcher over every source's values. */
  get matcher(): SecretMatcher {
    if (this.#matcher === null) {
      const all = new Set<string>();
      for (const values of this.#sources.values()) for (const v of values) all.add(v);
      this.#matcher = new SecretMatcher(all);
    }
    return this.#matcher;
  }

  redact(text: string, replacement: string = REDACTED): string {
    return this.#sources.size === 0 ? text : this.matcher.redact(text, replacement);
  }

  test(text: string): boolean {
    return this.#sources.size !== 0 && this.matcher.test(text);
  }
}

/** The process's registry: every redaction point reads it. */
export const knownSecrets = new KnownSecrets();

/**
 * `value` with every known secret replaced in its strings (keys included), at any depth. The same
 * value (not a copy) when it holds none, so callers on a busy path pay one scan.
 */
export function redactKnown<T>(value: T, replacement: string = REDACTED): T {
  if (typeof value === 'string') return knownSecrets.redact(value, replacement) as T;
  if (value === null || typeof value !== 'object') return value;
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch {
    return value;
  }
  if (text === undefined || !knownSecrets.test(text)) return value;
  return redactKnownDeep(value, replacement, 0) as T;
}

function redactKnownDeep(value: unknown, replacement: string, depth: number): unknown {
  if (typeof value === 'string') return knownSecrets.redact(value, replacement);
  if (value === null || typeof value !== 'object' || depth > 64) return value;
  if (Array.isArray(value)) return value.map((item) => redactKnownDeep(item, replacement, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[knownSecrets.redact(key, replacement)] = redactKnownDeep(item, replacement, depth + 1);
  }
  return out;
}

/** `*_env` keys that name a secret (not `base_url_env`, not `public_key_env`). */
const SECRET_ENV_KEY = /^(?!.*public).*(pass|secret|token|key|credential|auth).*_env$/i;

/** A `${VAR}` reference (with or without a default) in organism.yaml. */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-[^}]*)?\}/g;
/** Variable names that hold a secret: `${SMTP_PASSWORD}`, `${REDIS_PASS}`, `${GH_TOKEN}`, `${API_KEY}`. */
const SECRET_VAR = /^(?!.*PUBLIC).*(PASS|SECRET|TOKEN|KEY|CREDENTIAL|AUTH)/i;

/**
 * Every secret a config file holds at run time: `secretsFromConfig` (the `*_env` variables), and
 * the values of secret-looking variables it interpolates (`url: redis://:${REDIS_PASSWORD}@host`),
 * from `env` or the `.env` beside the file as the loader reads them.
 */
export async function configSecrets(
  configPath: string,
  config: unknown,
  env: NodeJS.ProcessEnv,
): Promise<string[]> {
  const out = secretsFromConfig(config, env);
  const file = resolve(configPath);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return out;
  }
  const names = [...text.matchAll(REFERENCE)].map((m) => m[1]!).filter((name) => SECRET_VAR.test(name));
  if (names.length === 0) return out;
  const dotEnv = (await loadDotEnv(join(dirname(file), '.env'), '.env')).vars;
  for (const name of names) {
    const value = env[name] ?? dotEnv[name];
    if (value) out.push(value);
  }
  return out;
}

/**
 * The secret values a config names: the value of every environment variable named under a
 * secret-looking `*_env` key (llm api_key_env, smtp/librarian password_env, web_search api_key_env,
 * auth token_env, ...), at any depth.
 */
export function secretsFromConfig(config: unknown, env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  const walk = (value: unknown, depth: number) => {
    if (depth > 16 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value) walk(item, depth + 1);
      return;
    }
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === 'string' && SECRET_ENV_KEY.test(key)) {
        const secret = env[item];
        if (secret) out.push(secret);
      } else walk(item, depth + 1);
    }
  };
  walk(config, 0);
  return out;
}

/**
 * Keys whose values are never recorded. Broad, but a bare `key` (the key_value_* tools' argument:
 * a name, not a credential) is kept readable; any `*_key` such as api_key or private_key is not.
 */
export const SECRET_KEY = /pass|secret|token|auth|credential|cookie|[a-z0-9][_-]?key$|[_-]key[_-]|^key[_-]/i;

const PATTERNS: Array<[RegExp, string]> = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED],
  // scheme://user:password@host
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]*@/gi, `$1${REDACTED}@`],
  // Authorization header values
  [/\b(Bearer|Basic|Token|Digest)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  // ?api_key=...&token=... in URLs and form bodies
  [/([?&;][^=&\s#]*(?:key|token|secret|pass|auth|sig)[^=&\s#]*=)[^&\s#]+/gi, `$1${REDACTED}`],
  // key=value / key: value in free text (e.g. `API_KEY=abc` in a shell command)
  [
    /\b([A-Za-z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|PRIVATE_KEY)[A-Za-z0-9_]*\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s"';&|]+)/gi,
    `$1${REDACTED}`,
  ],
  // Well-known credential formats
  [/\bsk-[A-Za-z0-9_-]{16,}/g, REDACTED],
  [/\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}/g, REDACTED],
  [/\bglpat-[A-Za-z0-9_-]{16,}/g, REDACTED],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/g, REDACTED],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, REDACTED],
  [/\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g, REDACTED],
];

const LONG_TOKEN = /[A-Za-z0-9_\-+/=]{32,}/g;

/**
 * Something every pattern above needs (a superset: a hit only means "look closer"). Most strings
 * (a path, an expression, a sentence) have none, and are done after this one scan.
 */
const MAY_HOLD_CREDENTIAL =
  /-----begin|:\/\/|bearer|basic|digest|key|token|secret|pass|auth|sig|sk-|gh[pousr]_|github_pat_|glpat-|xox|akia|asia|aiza|eyj|[a-z0-9_\-+/=]{32}/i;

/** Four or more of one character: zero bytes read as base64 (`AAAA`) or hex (`0000`), padding. */
const REPEATS = /(.)\1{3,}/g;

/**
 * A long run of mixed-case letters and digits (or 32+ hex digits) reads as a key, not as prose.
 * Runs of one character are left out before judging (a random key has none that long, but base64
 * or hex of zero bytes is all of them), and what is left must still be 16 characters or more.
 */
function looksLikeKey(token: string): boolean {
  const core = token.replace(REPEATS, '');
  if (core.length < 16) return false;
  if (/^[0-9a-f]+$/i.test(core)) return true;
  return /[A-Z]/.test(core) && /[a-z]/.test(core) && /[0-9]/.test(core) && !core.includes('//');
}

export function redactString(text: string): string {
  let out = knownSecrets.redact(text);
  if (!MAY_HOLD_CREDENTIAL.test(out)) return out;
  for (const [pattern, replacement] of PATTERNS) {
    pattern.lastIndex = 0;
    out = out.replace(pattern, replacement);
  }
  LONG_TOKEN.lastIndex = 0;
  return out.replace(LONG_TOKEN, (token) => (looksLikeKey(token) ? REDACTED : token));
}

export interface RedactOptions {
  /** Longest string kept; longer ones are cut with a note of the length (audit lines stay small). */
  maxString: number;
  /** Deepest nesting kept. */
  maxDepth: number;
}

const DEFAULTS: RedactOptions = { maxString: 2048, maxDepth: 16 };

/** A copy of `value` safe to record. Never mutates its input. */
export function redact(value: unknown, options: RedactOptions = DEFAULTS, depth = 0): unknown {
  if (typeof value === 'string') {
    const cut =
      value.length > options.maxString
        ? `${value.slice(0, options.maxString)}...[${value.length - options.maxString} more chars]`
        : value;
    return redactString(cut);
  }
  if (value === null || typeof value !== 'object') {
    return typeof value === 'bigint' || typeof value === 'function' || typeof value === 'symbol'
      ? String(value)
      : value;
  }
  if (depth >= options.maxDepth) return '[too deep]';
  if (Array.isArray(value)) return value.map((item) => redact(item, options, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // A "__proto__" key is data the tool was sent: it stays in the record (setOwn).
    setOwn(out, key, SECRET_KEY.test(key) ? REDACTED : redact(item, options, depth + 1));
  }
  return out;
}
