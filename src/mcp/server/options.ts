/**
 * How the organism keeps MCP sessions and streams (`mcp:` in organism.yaml), with the defaults in
 * one place; organism.schema.json documents the same. Read afresh at each use, so a reload applies
 * to the next session (the cap, the idle time) and the next call (stream close, retry).
 */

export interface McpServeOptions {
  /** Sessions open at once; an initialize past it is refused (503, mcp.session_limit). */
  max_sessions: number;
  /**
   * Sessions one credential may hold: past it its least recently used idle session is ended, or,
   * all busy, the initialize is refused. Without it one token (a viewer's) could take every session.
   */
  max_sessions_per_token: number;
  /** A session with no request and no open stream for this long is ended. */
  session_idle_ms: number;
  /** Messages kept per session for a client that reconnects with Last-Event-ID. */
  replay_events: number;
  /** At most this many bytes of them (the oldest go first). */
  replay_bytes: number;
  /** The `retry` hint of each SSE stream: how long a client waits before it reconnects. */
  sse_retry_ms: number;
  /**
   * A call still running after this long has its SSE stream closed; the client reconnects with
   * Last-Event-ID and gets the rest (SSE polling, SEP-1699). 0: streams stay open.
   */
  stream_close_ms: number;
}

export function defaultMcpServeOptions(): McpServeOptions {
  return {
    max_sessions: 100,
    max_sessions_per_token: 20,
    session_idle_ms: 1_800_000,
    replay_events: 1_000,
    replay_bytes: 2_097_152,
    sse_retry_ms: 1_000,
    stream_close_ms: 0,
  };
}

/** The `mcp:` section's serving keys with the defaults applied (the schema checked the values). */
export function mcpServeOptions(config: object): McpServeOptions {
  const section = ((config as { mcp?: unknown }).mcp ?? {}) as Partial<McpServeOptions>;
  const out = defaultMcpServeOptions();
  for (const key of Object.keys(out) as Array<keyof McpServeOptions>) {
    const value = section[key];
    if (typeof value === 'number') out[key] = value;
  }
  return out;
}
