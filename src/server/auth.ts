/**
 * Bearer-token authentication and roles for the HTTP and WebSocket API.
 *
 * Tokens come from organism.yaml `auth.tokens`: each names an environment variable holding the
 * token (`token_env`) or gives the token's hex SHA-256 (`sha256`), so the token itself need not
 * be stored anywhere. Besides them, the daemon's local token (local-token.ts: `<data_dir>/api-token`)
 * is always accepted, as `local` with the admin role: it is what the CLI and the dashboard on the
 * same machine use without setup. Only SHA-256 digests are kept in memory; a presented token is
 * hashed and compared with every digest in constant time (no early exit, timingSafeEqual), so the
 * answer's timing says nothing about how close a guess was.
 *
 * Roles are ordered: viewer (reads) < operator (also injects) < admin (also kills, pauses, reloads).
 * Every route but /healthz and the dashboard's files needs a credential, also on loopback and also
 * with no auth.tokens: an open loopback API would let any tool that reaches loopback (run_command
 * with network: true) act as a person. With no auth.tokens the server listens on loopback only
 * (see assertSafeBind).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthSection } from '../config/types.ts';
import { AuthError, ServerError } from '../errors.ts';
import { LOCAL_TOKEN_NAME } from './local-token.ts';

export type Role = 'viewer' | 'operator' | 'admin';

const RANK: Record<Role, number> = { viewer: 1, operator: 2, admin: 3 };

export interface Principal {
  /** The token's name from organism.yaml (logs and audit), or `local` for the local token. */
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

/** The local token as the authenticator keeps it: its digest only. */
export interface LocalCredential {
  readonly digest: Buffer;
}

export function localCredential(token: string): LocalCredential {
  return { digest: sha256(token) };
}

export class Authenticator {
  readonly #credentials: readonly Credential[];
  readonly #configured: number;
  readonly #local: LocalCredential | undefined;

  private constructor(configured: Credential[], local: LocalCredential | undefined) {
    this.#configured = configured.length;
    this.#local = local;
    this.#credentials = local
      ? [...configured, { name: LOCAL_TOKEN_NAME, role: 'admin', digest: local.digest }]
      : configured;
  }

  /**
   * Reads every token now (a missing or short env var is an error naming the variable, never its
   * value), so a bad setup fails at start or at reload, not at the first request.
   */
  static fromConfig(
    auth: AuthSection | undefined,
    env: NodeJS.ProcessEnv = process.env,
    local?: LocalCredential,
  ): Authenticator {
    const credentials: Credential[] = [];
    const problems: string[] = [];
    for (const token of auth?.tokens ?? []) {
      if (token.name === LOCAL_TOKEN_NAME) {
        problems.push(`auth token '${token.name}': the name is the daemon's local token's; choose another`);
        continue;
      }
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
    return new Authenticator(credentials, local);
  }

  /** True when organism.yaml configures tokens; false leaves only the local token (loopback only). */
  get enabled(): boolean {
    return this.#configured > 0;
  }

  /** The local token's digest, for the authenticator a reload builds. */
  get local(): LocalCredential | undefined {
    return this.#local;
  }

  /** Names and roles of the configured tokens (no digests), for the organism endpoint. */
  describe(): Array<{ name: string; role: Role }> {
    return this.#credentials.slice(0, this.#configured).map(({ name, role }) => ({ name, role }));
  }

  /**
   * The caller behind an `Authorization` header; throws AuthError (401) when there is none or it is
   * unknown. With no credential at all (no tokens, no local token) nothing is accepted.
   */
  authenticate(header: string | undefined): Principal {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
    if (!match) {
      throw new AuthError(
        'auth.required',
        "this API needs `Authorization: Bearer <token>`: an API token, or on the daemon's machine the local token in <data_dir>/api-token (the CLI finds it; `organism dashboard` prints a signed-in link)",
      );
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

/**
 * Beyond loopback only with tokens of organism.yaml: the local token is for this machine's CLI and
 * browser, not a network credential to hand out.
 */
export function assertSafeBind(host: string, auth: Authenticator): void {
  if (!isLoopbackHost(host) && !auth.enabled) {
    throw new ServerError(
      'server.unsafe_bind',
      `refusing to listen on ${host} without authentication: add auth.tokens to organism.yaml, or keep server.host on 127.0.0.1`,
      { host },
    );
  }
}
