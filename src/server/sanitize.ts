/**
 * GET /organism/config: the loaded organism.yaml (defaults filled in) made safe to show. Every
 * value that came from `${VAR}` is shown as the reference written in the file (the variable's
 * name, never its value); values under secret-looking keys are masked (`*_env` keys hold names and
 * stay); `auth.tokens[].sha256` is masked; and strings are scrubbed of credentials in URLs and the
 * like, for secrets someone wrote into the file itself.
 */
import { REDACTED, redactString } from '../audit/redact.ts';

const SECRET_KEY = /pass|secret|token|key|auth|credential|cookie|sha256/i;

/** `loaded` is the validated config; `raw` the same file parsed without interpolation. */
export function sanitizeConfig(loaded: unknown, raw: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(loaded)) as unknown;
  overlayReferences(copy, raw);
  return mask(copy, undefined);
}

/** Puts back `${VAR}` wherever the file wrote one, at the same path. */
function overlayReferences(target: unknown, raw: unknown): void {
  if (typeof target !== 'object' || target === null || typeof raw !== 'object' || raw === null) return;
  for (const [key, rawValue] of Object.entries(raw as Record<string, unknown>)) {
    if (!(key in (target as Record<string, unknown>))) continue;
    const here = target as Record<string, unknown>;
    if (typeof rawValue === 'string' && rawValue.includes('${')) here[key] = rawValue;
    else overlayReferences(here[key], rawValue);
  }
}

function mask(value: unknown, key: string | undefined): unknown {
  if (typeof value === 'string') {
    if (key !== undefined && SECRET_KEY.test(key) && !key.endsWith('_env')) {
      // A reference stays (it names a variable), but a default written in it may be the secret.
      if (!value.startsWith('${')) return REDACTED;
      return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*):?-[^}]*\}/g, `\${$1:-${REDACTED}}`);
    }
    return redactString(value);
  }
  if (Array.isArray(value)) return value.map((v) => mask(v, key));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = mask(v, k);
    return out;
  }
  return value;
}
