/**
 * Where an MCP server's OAuth state is kept between starts: its tokens, its dynamic registration
 * and the authorization server it is bound to. These are credentials, so the daemon keeps them in
 * the runtime state (src/state), sealed and encrypted under a key derived from the audit key:
 * embedded it is `<data_dir>/state`, which no tool and no sandboxed program can see; with Redis it
 * is the organism's own key space, where a program granted `network: true` reads only ciphertext.
 */
import { createHash } from 'node:crypto';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { RuntimeState } from '../../../state/index.ts';

/** OAuth tokens as kept: with the time they expire, worked out when they were received. */
export type StoredTokens = OAuthTokens & { expires_at?: number };

export interface OAuthRecord {
  /** Which configuration these belong to (the server's url and client): another one starts afresh. */
  fingerprint: string;
  tokens?: StoredTokens;
  /** A dynamic registration (or a CIMD client id), stamped with its authorization server. */
  client?: OAuthClientInformationFull;
  /** The authorization server a pre-registered client was first used with (the SDK's stamp). */
  boundIssuer?: string;
}

export interface OAuthStore {
  load(server: string): Promise<OAuthRecord | undefined>;
  save(server: string, record: OAuthRecord): Promise<void>;
}

/** The space of the runtime state the records live in, one key per server name. */
export const OAUTH_SPACE = 'mcp-oauth';

/** The runtime state as the store (the daemon's, and `organism mcp login`'s). */
export function stateOAuthStore(state: () => Promise<RuntimeState>): OAuthStore {
  return {
    async load(server) {
      const read = await (await state()).get(OAUTH_SPACE, server);
      // A record that fails its seal (forged, moved) is reported by the state and ignored here.
      return read.found && 'value' in read ? (read.value as OAuthRecord) : undefined;
    },
    async save(server, record) {
      await (await state()).setSecret(OAUTH_SPACE, server, record);
    },
  };
}

/** Kept in this process only (the conformance client, tests). */
export function memoryOAuthStore(): OAuthStore {
  const records = new Map<string, string>();
  return {
    async load(server) {
      const text = records.get(server);
      return text === undefined ? undefined : (JSON.parse(text) as OAuthRecord);
    },
    async save(server, record) {
      records.set(server, JSON.stringify(record));
    },
  };
}

/** What identifies the configuration tokens were obtained under (no secret in it, only its hash's part). */
export function oauthFingerprint(parts: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
}
