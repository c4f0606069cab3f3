/**
 * Bearer-token authentication and roles for the HTTP and WebSocket API.
 *
 * Tokens come from organism.yaml `auth.tokens`: each names an environment variable holding the
 * token (`token_env`) or gives the token's hex SHA-256 (`sha256`), so the token itself need not
 * be stored anywhere. Only SHA-256 digests are kept in memory; a presented token is hashed and
 * compared with every configured digest in constant time (no early exit, timingSafeEqual), so
 * the answer's timing says nothing about how close a guess was.
 *
 * Roles are ordered: viewer (reads) < operator (also injects) < admin (also kills, pauses, reloads).
 * With no tokens configured the API is open and every caller is `anonymous` with the admin role;
 * the server then refuses to listen anywhere but loopback (see assertSafeBind).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthSection } from '../config/types.ts';
import { AuthError, ServerError } from '../errors.ts';

export type Role = 'viewer' | 'operator' | 'admin';

const RANK: Record<Role, number> = { viewer: 1, operator: 2, admin: 3 };

export interface Principal {
  /** The token's name from organism.yaml (logs and audit), or `anonymous` when auth is off. */
  name: string;
  role: Role;
}

/** Shortest token accepted from an environment variable: shorter ones are guessable. */
export const MIN_TOKEN_LENGTH = 16;

interface Credential {
  name: string;
  role: Role;
  digest: Buffer;
}

export class Authenticator {
  readonly #credentials: readonly Credential[];

  private constructor(credentials: Credential[]) {
    this.#credentials = credentials;
  }

  /**
   * Reads every token now (a missing or short env var is an error naming the variable, never its
   * value), so a bad setup fails at start or at reload, not at the first request.
   */
  static fromConfig(auth: AuthSection | undefined, env: NodeJS.ProcessEnv = process.env): Authenticator {
    const credentials: Credential[] = [];
    const problems: string[] = [];
    for (const token of auth?.tokens ?? []) {
      if (token.sha256) {
        credentials.push({ name: token.name, role: token.role, digest: Buffer.from(token.sha256, 'hex') });
        continue;
      }
      const variable = token.token_env ?? '';
      const value = env[variable];
      if (!value) {
        problems.push(`auth token '${token.name}': environment variable ${variable} is not set`);
      } else if (value.length < MIN_TOKEN_LENGTH) {
        problems.push(
          `auth token '${token.name}': the token in ${variable} is shorter than ${MIN_TOKEN_LENGTH} characters`,
        );
      } else {
        credentials.push({ name: token.name, role: token.role, digest: sha256(value) });
      }
    }
    if (problems.length > 0) throw new ServerError('server.auth_env', problems.join('; '));
    return new Authenticator(credentials);
  }

  /** False when no tokens are configured: the API is open (loopback only). */
  get enabled(): boolean {
    return this.#credentials.length > 0;
  }

  /** Names and roles of the configured tokens (no digests), for the organism endpoint. */
  describe(): Array<{ name: string; role: Role }> {
    return this.#credentials.map(({ name, role }) => ({ name, role }));
  }

  /** The caller behind an `Authorization` header; throws AuthError (401) when there is none or it is unknown. */
  authenticate(header: string | undefined): Principal {
    if (!this.enabled) return { name: 'anonymous', role: 'admin' };
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
    if (!match) {
      throw new AuthError('auth.required', 'this API needs `Authorization: Bearer <token>`');
    }
    const presented = sha256(match[1]!);
    let found: Credential | undefined;
    // Every credential is compared, whatever matched earlier: constant work per request.
    for (const credential of this.#credentials) {
      if (timingSafeEqual(presented, credential.digest) && !found) found = credential;
    }
    if (!found) throw new AuthError('auth.invalid', 'the bearer token is not valid');
    return { name: found.name, role: found.role };
  }
}

/** Throws AuthError (403) unless `principal` has at least `needed`. */
export function requireRole(principal: Principal, needed: Role, action: string): void {
  if (RANK[principal.role] < RANK[needed]) {
    throw new AuthError(
      'auth.forbidden',
      `${action} needs the ${needed} role; token '${principal.name}' is ${principal.role}`,
    );
  }
}

export function hasRole(principal: Principal, needed: Role): boolean {
  return RANK[principal.role] >= RANK[needed];
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** 127.0.0.0/8, ::1 and `localhost`: addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (/^::ffff:127\.\d+\.\d+\.\d+$/.test(h)) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Listening beyond loopback with an open API would hand the organism to the network: refused. */
export function assertSafeBind(host: string, auth: Authenticator): void {
  if (!isLoopbackHost(host) && !auth.enabled) {
    throw new ServerError(
      'server.unsafe_bind',
      `refusing to listen on ${host} without authentication: add auth.tokens to organism.yaml, or keep server.host on 127.0.0.1`,
      { host },
    );
  }
}
