/** Where a Redis URL points, for messages and logs: `host:port`, never the password. A leaf module (no ioredis). */
export function redisAddress(url: string): string {
  // redis+cluster://[auth@]h1:p1,h2:p2: the seed nodes, never the credentials.
  const cluster = /^rediss?\+cluster:\/\/(?:[^@/]*@)?([^/?#]*)/.exec(url);
  if (cluster) return `cluster ${cluster[1]}`;
  try {
    const u = new URL(url);
    return `${u.hostname || '127.0.0.1'}:${u.port || '6379'}`;
  } catch {
    return '(unparseable kv.url)';
  }
}
