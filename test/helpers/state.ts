/** Runtime state stores (src/state) for tests: over a given KvStore, sealed with a fixed test key. */
import { auditKeyId } from '../../src/audit/key.ts';
import type { KvStore } from '../../src/kv/types.ts';
import { RuntimeState, StateSeal, type StateThreat } from '../../src/state/index.ts';

const SECRET = Buffer.from('test-state-key-0123456789abcdef0123456789abcdef', 'utf8');
/** One audit key every test store shares, so two "daemons" on one Redis verify each other's records. */
export const TEST_STATE_KEYS = [{ id: auditKeyId(SECRET), secret: SECRET }];

/** A RuntimeState over `store` (reports forged records to `threats` when given). */
export function testState(store: KvStore, threats?: StateThreat[]): RuntimeState {
  return new RuntimeState({
    open: async () => store,
    seal: new StateSeal(() => TEST_STATE_KEYS),
    ...(threats ? { threat: (t: StateThreat) => threats.push(t) } : {}),
  });
}
