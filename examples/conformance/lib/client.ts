import { OrganismError, type ToolRunContext } from 'organism';

/** Resolves after `ms`, or rejects when the call is aborted (timeout, shutdown). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

/** The MCP client that started the call; a call from elsewhere (the CLI, an agent) has none. */
export function mcpClient(ctx: ToolRunContext): NonNullable<ToolRunContext['client']> {
  if (!ctx.client)
    throw new OrganismError(
      'conformance.no_client',
      'this tool asks the MCP client that calls it; it was not called over MCP',
    );
  return ctx.client;
}
