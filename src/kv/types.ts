/**
 * The key/value store behind the key_value_* tools (and, later, once-only effects). One interface,
 * two backends side by side (embedded.ts on disk, redis.ts through ioredis); test/kv/kv.contract.ts
 * is the case file both run. Inputs are checked here, once, so both backends refuse the same
 * things with the same KvError codes.
 */
import { KvError } from '../errors.ts';

export interface KvStore {
  /** Which backend this is; shown in errors and `organism tools` output. */
  readonly kind: 'embedded' | 'redis';
  /** The stored JSON value (a fresh copy), or undefined when absent or expired. */
  get(namespace: string, key: string): Promise<unknown | undefined>;
  /** Stores any JSON value; resolves only once the value is durable (embedded: fsynced). */
  set(namespace: string, key: string, value: unknown, ttlSeconds?: number): Promise<void>;
  /** Stores the value only when the key is absent (or expired); true when it stored it. Atomic. */
  setIfAbsent(namespace: string, key: string, value: unknown, ttlSeconds?: number): Promise<boolean>;
  /** True when a live key was removed. */
  delete(namespace: string, key: string): Promise<boolean>;
  /** Flushes and releases the backend; later calls fail with `kv.closed`. Idempotent. */
  close(): Promise<void>;
}

/** Limits every backend enforces. Tools apply their own, smaller, tool_config limits first. */
export interface KvLimits {
  /** Largest JSON-encoded value in UTF-8 bytes. */
  maxValueBytes: number;
}

export const KEY_MAX_CHARS = 512;
export const NAMESPACE_MAX_CHARS = 128;
/** Hard ceiling of a value (the embedded store holds every value in memory). */
export const DEFAULT_MAX_VALUE_BYTES = 16 * 1024 * 1024;
/** Ten years: longer is surely a unit mistake (milliseconds given as seconds). */
export const MAX_TTL_SECONDS = 10 * 365 * 24 * 3600;

// C0 controls, DEL and C1 controls: invisible in logs and able to split log lines or protocols.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > KEY_MAX_CHARS) {
    throw new KvError('kv.invalid_key', `key must be a string of 1 to ${KEY_MAX_CHARS} characters`, {
      length: typeof key === 'string' ? key.length : undefined,
    });
  }
  if (CONTROL.test(key)) throw new KvError('kv.invalid_key', 'key must not contain control characters');
  return key;
}

/** Namespaces are usually listener names; `:` is refused because it separates parts of Redis keys. */
export function checkNamespace(namespace: unknown): string {
  if (typeof namespace !== 'string' || namespace.length === 0 || namespace.length > NAMESPACE_MAX_CHARS) {
    throw new KvError(
      'kv.invalid_namespace',
      `namespace must be a string of 1 to ${NAMESPACE_MAX_CHARS} characters`,
    );
  }
  if (CONTROL.test(namespace) || namespace.includes(':')) {
    throw new KvError('kv.invalid_namespace', 'namespace must not contain ":" or control characters', {
      namespace: JSON.stringify(namespace),
    });
  }
  return namespace;
}

export function checkTtl(ttlSeconds: unknown): number | undefined {
  if (ttlSeconds === undefined) return undefined;
  if (
    typeof ttlSeconds !== 'number' ||
    !Number.isInteger(ttlSeconds) ||
    ttlSeconds < 1 ||
    ttlSeconds > MAX_TTL_SECONDS
  ) {
    throw new KvError(
      'kv.invalid_ttl',
      `ttl must be a whole number of seconds from 1 to ${MAX_TTL_SECONDS}`,
      {
        ttl: String(ttlSeconds),
      },
    );
  }
  return ttlSeconds;
}

/** The value as JSON text, or a clear refusal when it is not JSON or is over the limit. */
export function encodeValue(value: unknown, maxValueBytes: number): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value, rejectNonJson);
  } catch (err) {
    throw new KvError('kv.invalid_value', `value is not JSON: ${(err as Error).message}`);
  }
  if (json === undefined) throw new KvError('kv.invalid_value', `value is not JSON (got ${typeof value})`);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > maxValueBytes) {
    throw new KvError(
      'kv.value_too_large',
      `value is ${bytes} bytes as JSON; the limit is ${maxValueBytes} bytes`,
      { bytes, limit: maxValueBytes },
    );
  }
  return json;
}

// JSON.stringify silently turns NaN into null and drops functions inside objects; a store that
// hands back something other than what was given is worse than a refusal.
function rejectNonJson(this: unknown, key: string, v: unknown): unknown {
  if (typeof v === 'number' && !Number.isFinite(v))
    throw new Error(`${where(key)} is ${v}, not a JSON number`);
  if (typeof v === 'function' || typeof v === 'symbol' || v === undefined) {
    // undefined at the top level is reported by the caller; inside arrays/objects it would vanish.
    if (key !== '') throw new Error(`${where(key)} is ${typeof v}, not JSON`);
  }
  return v;
}

function where(key: string): string {
  return key === '' ? 'the value' : `field ${JSON.stringify(key)}`;
}
