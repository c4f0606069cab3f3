/**
 * The Redis key space of one organism: every key its daemons share lives under
 * `organism:{<group>}:` (the braces are a Redis Cluster hash tag, so one Lua script may touch any
 * of them). A leaf module: the bus (`bus/transport/redis/options.ts`, BusKeys) and the tools' shared state
 * (`tools/shared-state.ts`) each build their keys on it without importing the other.
 */
import { TransportError } from './errors.ts';

// Braces would break the cluster hash tag; control characters would break logs and redis-cli.
const BAD_NAME = /[{}\u0000-\u001f\u007f]/;

/** Throws unless `value` may name a group or a consumer: 1 to 200 characters, no braces or controls. */
export function checkKeyName(what: string, value: unknown): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > 200 || BAD_NAME.test(value)) {
    throw new TransportError(
      'transport.invalid_option',
      `${what} must be 1 to 200 characters with no braces or control characters`,
      { [what]: typeof value === 'string' ? JSON.stringify(value) : typeof value },
    );
  }
}

/** The prefix of every key of the organism whose daemons form consumer group `group`. */
export function organismKeyPrefix(group: string): string {
  checkKeyName('bus.group', group);
  return `organism:{${group}}:`;
}

/**
 * The prefix of the organism's runtime state (src/state: approvals, once-only effect records). The
 * key_value_* tools' keys all start `organism:kv:`, so none of theirs can name one of these.
 */
export function organismStatePrefix(group: string): string {
  return `${organismKeyPrefix(group)}state:`;
}

/** Keys of the tool runtime state an organism's daemons share (tools/shared-state.ts). */
export class SharedToolKeys {
  readonly prefix: string;

  constructor(group: string) {
    this.prefix = organismKeyPrefix(group);
  }

  rateBucket(key: string): string {
    return `${this.prefix}rate:${key}`;
  }

  get revocations(): string {
    return `${this.prefix}revocations`;
  }
}
