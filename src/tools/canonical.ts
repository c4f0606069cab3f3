/**
 * Canonical JSON: object keys sorted, so `{a:1,b:2}` and `{b:2,a:1}` are the same call for loop
 * detection, and manifests sign the same bytes on every machine.
 */
import { setOwn } from '../plain-object.ts';
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      // setOwn: a "__proto__" key assigned would vanish from what is hashed or signed (an MCP
      // server's schema could then change under it without breaking its pin).
      setOwn(out, key, sortKeys((value as Record<string, unknown>)[key]));
    }
    return out;
  }
  return value;
}
