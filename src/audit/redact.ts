/**
 * Secrets never reach the audit log (invariant 7): values under secret-looking keys are replaced,
 * and strings are scrubbed of things that look like credentials wherever they appear.
 */

export const REDACTED = '[REDACTED]';

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

/** A long run of mixed-case letters and digits (or 32+ hex digits) reads as a key, not as prose. */
function looksLikeKey(token: string): boolean {
  if (/^[0-9a-f]{32,}$/i.test(token)) return true;
  return /[A-Z]/.test(token) && /[a-z]/.test(token) && /[0-9]/.test(token) && !token.includes('//');
}

export function redactString(text: string): string {
  let out = text;
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
    out[key] = SECRET_KEY.test(key) ? REDACTED : redact(item, options, depth + 1);
  }
  return out;
}
