/**
 * Shared thread state writes, batched: every registry and history change made in one turn of the
 * event loop goes to Redis as one script call instead of one command each (a hop makes five or
 * six), which halves the commands per message. The batch is sent before any XADD the transport
 * makes (RedisTransport.beforePublish), on the same connection, so a message is never in a stream
 * before the thread state it refers to; otherwise at the end of the current turn.
 */
import type { Redis } from 'ioredis';

/**
 * ARGV is a list of operations, each an opcode then its arguments; keys are indexes into KEYS (one
 * hash slot: they all carry the organism's hash tag). Returns the results of `settle` operations.
 */
const BATCH_SCRIPT = `
local out = {}
local i = 1
local n = #ARGV
while i <= n do
  local op = ARGV[i]
  if op == 'hset' then
    redis.call('HSET', KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2], ARGV[i + 3])
    i = i + 4
  elseif op == 'hincr' then
    redis.call('HINCRBY', KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2], ARGV[i + 3])
    i = i + 4
  elseif op == 'hdel' then
    redis.call('HDEL', KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2])
    i = i + 3
  elseif op == 'pexpire' then
    redis.call('PEXPIRE', KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2])
    i = i + 3
  elseif op == 'publish' then
    redis.call('PUBLISH', KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2])
    i = i + 3
  elseif op == 'hist' then
    -- history key, thread key, channel, entry, max, ttl, event: the entry is numbered in its
    -- thread (hash field hist) and announced as '<n>|<event>', so a daemon can tell it missed one.
    local key = KEYS[tonumber(ARGV[i + 1])]
    local thread = KEYS[tonumber(ARGV[i + 2])]
    redis.call('RPUSH', key, ARGV[i + 4])
    redis.call('LTRIM', key, -tonumber(ARGV[i + 5]), -1)
    redis.call('PEXPIRE', key, ARGV[i + 6])
    local n = 0
    if redis.call('EXISTS', thread) == 1 then n = redis.call('HINCRBY', thread, 'hist', 1) end
    redis.call('PUBLISH', KEYS[tonumber(ARGV[i + 3])], n .. '|' .. ARGV[i + 7])
    i = i + 8
  elseif op == 'settle' then
    local key = KEYS[tonumber(ARGV[i + 1])]
    local left = 0
    if redis.call('EXISTS', key) == 1 then
      left = redis.call('HINCRBY', key, 'inflight', -1)
      if left <= 0 then
        left = 0
        redis.call('HSET', key, 'inflight', 0)
        redis.call('PUBLISH', KEYS[tonumber(ARGV[i + 2])], ARGV[i + 3])
      end
    end
    out[#out + 1] = left
    i = i + 4
  else
    return redis.error_reply('unknown batch op ' .. tostring(op))
  end
end
return out
`;

type BatchClient = Redis & { organismBatch(numKeys: number, ...args: string[]): Promise<number[]> };

export class WriteBatch {
  private readonly client: BatchClient;
  private keys: string[] = [];
  private keyIndex = new Map<string, number>();
  private args: string[] = [];
  private settles: Array<{ resolve: (left: number) => void; reject: (error: Error) => void }> = [];
  private scheduled = false;

  constructor(
    client: Redis,
    private readonly onError: (error: Error) => void,
  ) {
    this.client = client as BatchClient;
    if (!(client as unknown as Partial<BatchClient>).organismBatch) {
      client.defineCommand('organismBatch', { lua: BATCH_SCRIPT });
    }
  }

  hset(key: string, field: string, value: string): void {
    this.push('hset', key, field, value);
  }

  hincr(key: string, field: string, by: number): void {
    this.push('hincr', key, field, String(by));
  }

  hdel(key: string, field: string): void {
    this.push('hdel', key, field);
  }

  pexpire(key: string, ms: string): void {
    this.push('pexpire', key, ms);
  }

  publish(channel: string, text: string): void {
    this.push('publish', channel, text);
  }

  /** RPUSH + LTRIM to `max` + PEXPIRE, count in the thread hash, announce on `channel`. */
  history(
    key: string,
    threadKey: string,
    channel: string,
    entry: string,
    max: number,
    ttlMs: number,
    event: string,
  ): void {
    this.push('hist', key, this.key(threadKey), this.key(channel), entry, String(max), String(ttlMs), event);
  }

  /** In-flight count minus one; at zero an idle notice goes out. Resolves with what is left. */
  settle(threadKey: string, channel: string, idleNotice: string): Promise<number> {
    const result = new Promise<number>((resolve, reject) => this.settles.push({ resolve, reject }));
    this.push('settle', threadKey, this.key(channel), idleNotice);
    this.flush();
    return result;
  }

  /** Sends what is queued now (before an XADD that depends on it). */
  flush(): void {
    if (this.args.length === 0) return;
    const { keys, args, settles } = this;
    this.keys = [];
    this.keyIndex = new Map();
    this.args = [];
    this.settles = [];
    this.client.organismBatch(keys.length, ...keys, ...args).then(
      (results) => {
        for (let i = 0; i < settles.length; i++) settles[i]!.resolve(Number(results[i] ?? 0));
      },
      (error: Error) => {
        for (const settle of settles) settle.reject(error);
        this.onError(error);
      },
    );
  }

  private push(op: string, key: string, ...rest: string[]): void {
    this.args.push(op, this.key(key), ...rest);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => {
        this.scheduled = false;
        this.flush();
      });
    }
  }

  /** The 1-based KEYS index of `key` (a string, as ARGV carries it). */
  private key(key: string): string {
    let index = this.keyIndex.get(key);
    if (index === undefined) {
      this.keys.push(key);
      index = this.keys.length;
      this.keyIndex.set(key, index);
    }
    return String(index);
  }
}
