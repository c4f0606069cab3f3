/**
 * The batch's script call written without ioredis's generic command path (script-call.ts), on the
 * real redis-server at 127.0.0.1:6379: its RESP text, and the EVAL / EVALSHA / NOSCRIPT handling it
 * took over from ioredis's Script.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { callScript, encode, loadedScript } from '../../src/bus/transport/redis/script-call.ts';
import { until } from '../../src/testing/index.ts';
import { monitorCommands } from './redis-monitor.ts';

const URL = 'redis://127.0.0.1:6379';
const client = new Redis(URL, { maxRetriesPerRequest: 1 });

afterAll(async () => {
  await client.quit();
});

/** RESP as the protocol defines it: every length in UTF-8 bytes. */
function reference(args: readonly string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/** A script of its own (a fresh comment), so no other test or client has it loaded. */
function freshScript(): ReturnType<typeof loadedScript> {
  return loadedScript(`-- ${randomUUID()}\nreturn {KEYS[1], ARGV[1], ARGV[2]}`);
}

describe('script call', () => {
  it('writes RESP with byte lengths, for ASCII arguments and for any others', () => {
    const ascii = ['k', '', 'x'.repeat(2_000), '{"id":"1"}'];
    expect(encode('evalsha', ascii)).toBe(reference(['evalsha', ...ascii]));
    const other = ['Grüße', '日本語', '🦀 crab', 'plain'];
    expect(encode('evalsha', other)).toBe(reference(['evalsha', ...other]));
  });

  it('sends EVAL on a connection first, EVALSHA after, and keys, arguments and UTF-8 come through whole', async () => {
    const script = freshScript();
    const seen: string[] = [];
    const monitor = await monitorCommands(client, (args) => {
      // MONITOR escapes the script's text: its first line (the fresh comment) is enough.
      if (args[1] === script.sha || args[1]?.startsWith(script.lua.split('\n')[0]!))
        seen.push(args[0]!.toLowerCase());
    });
    try {
      const call = (arg: string) => callScript(client, script, [script.sha, '1', 'key-1', arg, 'Grüße 🦀']);
      expect(await call('a')).toEqual(['key-1', 'a', 'Grüße 🦀']);
      expect(await call('b')).toEqual(['key-1', 'b', 'Grüße 🦀']);
      await until(() => seen.length >= 2, 'both calls in MONITOR');
      expect(seen).toEqual(['eval', 'evalsha']);
    } finally {
      monitor.stop();
    }
  });

  it('sends the script again when Redis does not have it (NOSCRIPT: restarted or flushed)', async () => {
    const script = freshScript();
    // The connection is taken to have loaded it; Redis never saw it: EVALSHA is answered NOSCRIPT.
    script.loaded.add((client as unknown as { stream: object }).stream);
    expect(await callScript(client, script, [script.sha, '1', 'k', 'v', 'w'])).toEqual(['k', 'v', 'w']);
    expect(await callScript(client, script, [script.sha, '1', 'k', 'x', 'y'])).toEqual(['k', 'x', 'y']);
  });
});
