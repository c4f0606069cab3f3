/** Raw Streamable HTTP for the tests that watch the wire: SSE events as they arrive, a session by hand. */

export interface SseEvent {
  id?: string;
  retry?: number;
  data: string;
}

/** Reads SSE events from `response` one at a time; `next` resolves undefined at the stream's end. */
export function sseReader(response: Response): {
  next(ms?: number): Promise<SseEvent | undefined>;
  cancel(): Promise<void>;
} {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let ended = false;
  const take = (): SseEvent | undefined => {
    const end = buffer.indexOf('\n\n');
    if (end < 0) return undefined;
    const block = buffer.slice(0, end);
    buffer = buffer.slice(end + 2);
    const event: SseEvent = { data: '' };
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') event.id = value;
      else if (field === 'retry') event.retry = Number(value);
      else if (field === 'data') data.push(value);
    }
    event.data = data.join('\n');
    // A block of comments only (keep-alive) is no event.
    return block.split('\n').every((l) => l.startsWith(':')) ? take() : event;
  };
  return {
    async next(ms = 10_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const event = take();
        if (event) return event;
        if (ended) return undefined;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no SSE event within ${ms} ms`);
        let timer: NodeJS.Timeout | undefined;
        const chunk = await Promise.race([
          reader.read(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no SSE event within ${ms} ms`)), left);
          }),
        ]).finally(() => clearTimeout(timer));
        if (chunk.done) ended = true;
        else buffer += decoder.decode(chunk.value, { stream: true });
      }
    },
    cancel: () => reader.cancel().catch(() => {}),
  };
}

/** The JSON-RPC message an event carries; undefined for a priming event (empty data). */
export function messageOf(event: SseEvent): Record<string, unknown> | undefined {
  return event.data.trim() === '' ? undefined : (JSON.parse(event.data) as Record<string, unknown>);
}

export interface RawSession {
  id: string;
  headers(extra?: Record<string, string>): Record<string, string>;
}

/** initialize + initialized by hand, as `token`; the session's id and the headers its requests need. */
export async function openRaw(url: string, token: string, capabilities: object = {}): Promise<RawSession> {
  const base = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
  };
  const init = await fetch(url, {
    method: 'POST',
    headers: base,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  if (init.status !== 200) throw new Error(`initialize: ${init.status} ${await init.text()}`);
  const id = init.headers.get('mcp-session-id');
  if (!id) throw new Error('initialize gave no Mcp-Session-Id');
  await init.text();
  const headers = (extra: Record<string, string> = {}) => ({
    ...base,
    'mcp-session-id': id,
    'mcp-protocol-version': '2025-11-25',
    ...extra,
  });
  const done = await fetch(url, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  if (done.status !== 202) throw new Error(`initialized: ${done.status}`);
  return { id, headers };
}
