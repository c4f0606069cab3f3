/**
 * Partitions (organism.yaml `bus.partitions`): with N > 1 every listener's stream, and the thread
 * state of the threads it carries, is split in N parts, each under a hash tag of its own, so a
 * Redis Cluster spreads them over its masters. A message goes to the partition of its thread: a
 * thread's messages, state and history share one slot (the batch script may touch them together)
 * and keep their order.
 *
 * Partition p's tag is `<group>/p<p>`, or `<group>/p<p>.<k>` with the smallest k that puts it in
 * the p-th of N equal slot ranges: `redis-cli --cluster create` gives each of M masters one
 * contiguous, equal range, so N partitions (N a multiple of M) land N/M on each master. With one
 * partition the tag is the group itself: today's key layout, unchanged.
 */

const SLOTS = 16_384;

// CRC16-CCITT (XMODEM), the hash Redis Cluster maps keys to slots with.
const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let j = 0; j < 8; j++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/** The cluster slot of a key (its hash tag's, when it has one), as CLUSTER KEYSLOT answers. */
export function keySlot(key: string): number {
  let text = key;
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) text = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(text, 'utf8'))
    crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc % SLOTS;
}

/** The hash tag of each of the N partitions of group `group` (see above). */
export function partitionTags(group: string, partitions: number): string[] {
  if (partitions === 1) return [group];
  const tags: string[] = [];
  for (let p = 0; p < partitions; p++) {
    const from = Math.floor((p * SLOTS) / partitions);
    const to = Math.floor(((p + 1) * SLOTS) / partitions);
    let tag = `${group}/p${p}`;
    for (let k = 0; ; k++) {
      const slot = keySlot(`{${tag}}`);
      if (slot >= from && slot < to) break;
      tag = `${group}/p${p}.${k}`;
    }
    tags.push(tag);
  }
  return tags;
}

/** The partition of a thread: FNV-1a of its id, modulo N (0 with one partition). */
export function partitionOf(thread: string, partitions: number): number {
  if (partitions === 1) return 0;
  let h = 0x811c9dc5;
  for (let i = 0; i < thread.length; i++) {
    h ^= thread.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % partitions;
}
