/**
 * The fetch an OAuth-protected server's transport uses: it adds the bearer token, renews tokens
 * that expired (refresh token, or client credentials again), and answers a 401, or a 403 with
 * `insufficient_scope` (step-up), by authorizing again (SDK `auth()`: protected-resource and
 * authorization-server discovery, registration, resource indicator) with the scopes challenged
 * added to those held, then sends the request once more. A server that keeps refusing costs at most
 * MAX_AUTHORIZATIONS per request, never a loop.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError } from '../../../errors.ts';
import type { OrganismOAuthProvider } from './provider.ts';

/** Authorizations one request may start before its refusal is the answer. */
export const MAX_AUTHORIZATIONS = 2;

export function oauthFetch(provider: OrganismOAuthProvider, serverUrl: URL, next: FetchLike): FetchLike {
  // Requests refused together (a POST and the SSE GET) wait for one authorization, not one each.
  let inflight: Promise<void> | undefined;
  const authorize = (challenge?: Response): Promise<void> => {
    inflight ??= authorizeOnce(challenge).finally(() => {
      inflight = undefined;
    });
    return inflight;
  };
  const authorizeOnce = async (challenge?: Response): Promise<void> => {
    const { auth, extractWWWAuthenticateParams } = await import('@modelcontextprotocol/sdk/client/auth.js');
    const { resourceMetadataUrl, scope } = challenge ? extractWWWAuthenticateParams(challenge) : {};
    const held = (await provider.tokens())?.scope;
    const asked = scope ? unionScopes(held, scope) : held;
    provider.ask(asked);
    const options = {
      serverUrl,
      fetchFn: next,
      ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
      ...(asked ? { scope: asked } : {}),
    };
    let result: string;
    try {
      result = await auth(provider, options);
      if (result === 'REDIRECT') {
        const authorizationCode = await provider.takeCode();
        result = await auth(provider, { ...options, authorizationCode });
      }
    } catch (error) {
      if (error instanceof McpError) throw error;
      // The SDK's OAuth errors carry the server's error code; their message may be empty.
      const code = (error as { errorCode?: string }).errorCode;
      const said = [code, (error as Error).message].filter(Boolean).join(': ') || String(error);
      throw new McpError('mcp.unavailable', `authorization with ${serverUrl.origin} failed: ${said}`);
    }
    if (result !== 'AUTHORIZED')
      throw new McpError('mcp.unavailable', `authorization with ${serverUrl.origin} did not complete`);
  };

  return async (input, init) => {
    if ((await provider.tokens()) && (await provider.expired())) await authorize();
    const send = async () => {
      const headers = new Headers(init?.headers);
      const tokens = await provider.tokens();
      if (tokens) headers.set('Authorization', `Bearer ${tokens.access_token}`);
      return next(input, { ...init, headers });
    };
    let response = await send();
    for (let attempt = 0; attempt < MAX_AUTHORIZATIONS && challenged(response); attempt++) {
      await response.body?.cancel().catch(() => {});
      await authorize(response);
      response = await send();
    }
    return response;
  };
}

/** 401, or 403 asking for more scope (another 403 is a refusal no token changes). */
function challenged(response: Response): boolean {
  if (response.status === 401) return true;
  if (response.status !== 403) return false;
  return /error="?insufficient_scope/i.test(response.headers.get('www-authenticate') ?? '');
}

/** Step-up keeps what was granted: the scopes held plus those the server asks for. */
function unionScopes(held: string | undefined, asked: string | undefined): string | undefined {
  const all = new Set([...(held?.split(' ') ?? []), ...(asked?.split(' ') ?? [])].filter(Boolean));
  return all.size > 0 ? [...all].join(' ') : undefined;
}
