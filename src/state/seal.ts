/**
 * Seals for the runtime's own records (approval requests and decisions, once-only effect records),
 * and names for keys that must not be guessed (effect records).
 *
 * Why a seal on top of a store tools cannot open: with Redis, the store is a network service, and a
 * sandboxed program granted `network: true` can talk to it (redis-cli SET). What it cannot do is make
 * a record the runtime acts on, because each record carries an HMAC-SHA256 under a key it cannot
 * read, bound to the record's place (space and key), so a genuine record copied elsewhere fails too.
 *
 * The key is derived (HKDF-SHA256, its own label) from each audit key: kept outside data_dir, hidden
 * from the sandbox, already shared by the daemons of one organism, and rotated with it (the newest
 * key seals, every key of the ring verifies). A derived key never seals an audit line, and an audit
 * key never seals a state record, so neither can be passed off as the other.
 *
 * Record as stored: `{ s: 1, kid, mac, body }` where body is the value's JSON text (verified as the
 * bytes stored, so no canonical form is needed) and kid names the audit key (its public id).
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import type { AuditKey } from '../audit/key.ts';
import { StateError } from '../errors.ts';

const SEAL_INFO = 'organism runtime state v1';
/**
 * A secret record (an MCP server's OAuth tokens) is also encrypted, under a key of its own label:
 * the seal stops a forged record, but with Redis a program granted `network: true` can still read
 * the key space, and a token it read would be a credential it could use.
 */
const SECRET_INFO = 'organism runtime secrets v1';
const FORMAT = 1;
/** Hex digits of a key name: 128 bits. */
const NAME_HEX = 32;

export interface SealedRecord {
  s: typeof FORMAT;
  kid: string;
  mac: string;
  body: string;
  /** 1: body is `iv.tag.ciphertext` (base64url, AES-256-GCM) of the value's JSON text. */
  x?: 1;
}

export type Opened = { ok: true; value: unknown } | { ok: false; reason: string };

/** The keys a seal uses: a live view, so a rotation of the audit keys applies at once. */
export type StateKeys = () => readonly AuditKey[];

export class StateSeal {
  readonly #keys: StateKeys;
  /** Derived keys by audit key id (HKDF once per key, not per record). */
  readonly #derived = new Map<string, Buffer>();
  readonly #secretKeys = new Map<string, Buffer>();

  constructor(keys: StateKeys) {
    this.#keys = keys;
  }

  /** The record to store for `value` at `where` (`<space>/<key>`). */
  seal(where: string, value: unknown): SealedRecord {
    const key = this.#current();
    const body = JSON.stringify(value);
    return { s: FORMAT, kid: key.id, mac: mac(this.#derive(key), where, body), body };
  }

  /** Like seal, with the value encrypted too (readable only with the audit key). */
  sealSecret(where: string, value: unknown): SealedRecord {
    const key = this.#current();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#secretKey(key), iv);
    cipher.setAAD(Buffer.from(where));
    const text = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    const body = [iv, cipher.getAuthTag(), text].map((b) => b.toString('base64url')).join('.');
    return { s: FORMAT, kid: key.id, mac: mac(this.#derive(key), where, body), body, x: 1 };
  }

  /** The value of a record read at `where`, or why it is not to be trusted. */
  open(where: string, record: unknown): Opened {
    if (!isSealed(record)) return { ok: false, reason: 'it is not a sealed record' };
    const key = this.#keys().find((k) => k.id === record.kid);
    if (!key) {
      return {
        ok: false,
        reason: `it is sealed with key ${JSON.stringify(record.kid.slice(0, 16))}, which this daemon does not have (daemons sharing one Redis need the same audit key)`,
      };
    }
    const expected = Buffer.from(mac(this.#derive(key), where, record.body), 'hex');
    const given = Buffer.from(record.mac, 'hex');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return { ok: false, reason: 'its seal does not match (changed, moved or forged)' };
    }
    try {
      const text = record.x === 1 ? this.#decrypt(key, where, record.body) : record.body;
      return { ok: true, value: JSON.parse(text) };
    } catch {
      return { ok: false, reason: record.x === 1 ? 'its body does not decrypt' : 'its body is not JSON' };
    }
  }

  #decrypt(key: AuditKey, where: string, body: string): string {
    const [iv, tag, text] = body.split('.').map((part) => Buffer.from(part, 'base64url'));
    if (!iv || !tag || !text) throw new Error('not an encrypted body');
    const decipher = createDecipheriv('aes-256-gcm', this.#secretKey(key), iv);
    decipher.setAAD(Buffer.from(where));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(text), decipher.final()]).toString('utf8');
  }

  #secretKey(key: AuditKey): Buffer {
    let derived = this.#secretKeys.get(key.id);
    if (!derived) {
      derived = Buffer.from(hkdfSync('sha256', key.secret, Buffer.alloc(0), SECRET_INFO, 32));
      this.#secretKeys.set(key.id, derived);
    }
    return derived;
  }

  /**
   * Names of `id` under `label` that nobody without the key can work out, one per key of the ring,
   * the current key's first: a record named under a key rotated out of first place is still found.
   */
  names(label: string, id: string): string[] {
    const keys = this.#keys();
    const out: string[] = [];
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as AuditKey;
      out.push(
        createHmac('sha256', this.#derive(key))
          .update(`name\u0000${label}\u0000${id}`)
          .digest('hex')
          .slice(0, NAME_HEX),
      );
    }
    return out;
  }

  #current(): AuditKey {
    const key = this.#keys().at(-1);
    if (!key)
      throw new StateError('state.no_key', 'the runtime state has no audit key to seal its records with');
    return key;
  }

  #derive(key: AuditKey): Buffer {
    let derived = this.#derived.get(key.id);
    if (!derived) {
      derived = Buffer.from(hkdfSync('sha256', key.secret, Buffer.alloc(0), SEAL_INFO, 32));
      this.#derived.set(key.id, derived);
    }
    return derived;
  }
}

function mac(key: Buffer, where: string, body: string): string {
  return createHmac('sha256', key).update(`seal\u0000${where}\u0000${body}`).digest('hex');
}

function isSealed(record: unknown): record is SealedRecord {
  if (typeof record !== 'object' || record === null) return false;
  const r = record as Record<string, unknown>;
  return (
    r.s === FORMAT &&
    typeof r.kid === 'string' &&
    typeof r.mac === 'string' &&
    /^[0-9a-f]{64}$/.test(r.mac) &&
    typeof r.body === 'string' &&
    (r.x === undefined || r.x === 1)
  );
}
