/** Where a Redis URL points, for messages and logs: `host:port`, never the password. A leaf module (no ioredis). */
export function redisAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname || '127.0.0.1'}:${u.port || '6379'}`;
  } catch {
    return '(unparseable kv.url)';
  }
}
