/**
 * Child process for the kill -9 test: sets keys, prints "set-done" once every set() has returned,
 * then keeps writing noise so the SIGKILL lands in the middle of an append.
 * Usage: node --import tsx child-writer.ts <dir>
 */
import { openEmbeddedKvStore } from '../../src/kv/embedded.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: child-writer.ts <dir>');
const store = await openEmbeddedKvStore({ dir });
for (let i = 0; i < 50; i++) await store.set('child', `key-${i}`, { i, text: `value ${i}` });
await store.set('child', 'overwritten', 'old');
await store.set('child', 'overwritten', 'new');
await store.set('child', 'deleted', 'soon gone');
await store.delete('child', 'deleted');
await store.set('child', 'with-ttl', 'lives an hour', 3600);
await Promise.all(Array.from({ length: 20 }, (_, i) => store.set('child', `parallel-${i}`, i)));
process.stdout.write('set-done\n');
// Unacknowledged writes from here on: the parent kills us while these are in flight.
const noise = 'n'.repeat(64 * 1024);
for (let i = 0; ; i++) await store.set('noise', `n${i % 100}`, noise);
