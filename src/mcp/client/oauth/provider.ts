/**
 * The SDK's OAuthClientProvider for one configured server: client information from organism.yaml
 * (pre-registered client, secret from an env var, private key file) or from a registration it made,
 * tokens kept in an OAuthStore (the runtime state in the daemon), and the authorization-code flow's
 * person handled by a UserAgent: the daemon has none (a call says to run `organism mcp login`),
 * the login command prints the URL and catches the redirect on a loopback port.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { AddClientAuthentication, OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { McpError } from '../../../errors.ts';
import type { ResolvedAuthConfig } from '../../config.ts';
import { type OAuthRecord, type OAuthStore, oauthFingerprint, type StoredTokens } from './store.ts';

/** Takes a person (or a stand-in) to the authorization URL; resolves with the code the redirect brought back. */
export interface UserAgent {
  authorize(url: URL, expect: { redirectUri: string; state: string }): Promise<string>;
}

/** The daemon's: nobody to sign in, so the call fails saying how a person does it. */
export function noUserAgent(server: string): UserAgent {
  return {
    authorize() {
      return Promise.reject(
        new McpError(
          'mcp.unavailable',
          `MCP server ${server} needs a person to sign in: run 'organism mcp login ${server}' once, then the daemon uses (and refreshes) the tokens it keeps`,
          { server },
        ),
      );
    },
  };
}

export interface ProviderOptions {
  server: string;
  url: string;
  auth: ResolvedAuthConfig;
  /** The organism.yaml file: private_key_file is relative to its folder. */
  configFile: string;
  env: NodeJS.ProcessEnv;
  store: OAuthStore;
  agent: UserAgent;
}

/** Tokens are taken as expired this long (at most a tenth of their life) before they say, so a request does not race the clock. */
const EXPIRY_SKEW_MS = 30_000;

export class OrganismOAuthProvider implements OAuthClientProvider {
  readonly #o: ProviderOptions;
  readonly #fingerprint: string;
  #record: OAuthRecord | undefined;
  #loading: Promise<OAuthRecord> | undefined;
  #verifier: string | undefined;
  #state: string | undefined;
  #code: Promise<string> | undefined;
  /** The scopes the authorization under way asks for (challenged and held), when the server said. */
  #asked: string | undefined;
  readonly addClientAuthentication?: AddClientAuthentication;
  readonly #secret: string | undefined;

  constructor(options: ProviderOptions) {
    this.#o = options;
    const { auth } = options;
    this.#fingerprint = oauthFingerprint({
      url: options.url,
      grant: auth.grant,
      client_id: auth.client_id ?? null,
      client_metadata_url: auth.client_metadata_url ?? null,
      issuer: auth.issuer ?? null,
    });
    if (auth.client_secret_env !== undefined) {
      const secret = options.env[auth.client_secret_env];
      if (!secret)
        throw new McpError(
          'mcp.config',
          `environment variable ${auth.client_secret_env} (mcp_servers ${options.server}.auth.client_secret_env) is not set`,
        );
      this.#secret = secret;
    }
    if (auth.private_key_file !== undefined) this.addClientAuthentication = this.#jwtAuth(auth);
  }

  #jwtAuth(auth: ResolvedAuthConfig): AddClientAuthentication {
    const file = resolve(dirname(this.#o.configFile), auth.private_key_file as string);
    let pem: string;
    try {
      pem = readFileSync(file, 'utf8');
    } catch (error) {
      throw new McpError(
        'mcp.config',
        `mcp_servers ${this.#o.server}.auth.private_key_file: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    const clientId = auth.client_id ?? '';
    let sign: AddClientAuthentication | undefined;
    return async (headers, params, url, metadata) => {
      const { createPrivateKeyJwtAuth } = await import('@modelcontextprotocol/sdk/client/auth-extensions.js');
      sign ??= createPrivateKeyJwtAuth({
        issuer: clientId,
        subject: clientId,
        privateKey: pem,
        alg: auth.jwt_algorithm,
      });
      await sign(headers, params, url, metadata);
    };
  }

  /**
   * Reads the stored record once (a record of another configuration is not used). Without tokens it
   * is read again, so tokens `organism mcp login` stored meanwhile (Redis) are found.
   */
  async load(): Promise<OAuthRecord> {
    if (this.#record?.tokens) return this.#record;
    this.#loading ??= this.#read().finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  async #read(): Promise<OAuthRecord> {
    const stored = await this.#o.store.load(this.#o.server);
    this.#record =
      stored?.fingerprint === this.#fingerprint
        ? stored
        : (this.#record ?? { fingerprint: this.#fingerprint });
    return this.#record;
  }

  async #save(change: Partial<OAuthRecord>): Promise<void> {
    const record = { ...(await this.load()), ...change };
    this.#record = record;
    await this.#o.store.save(this.#o.server, record);
  }

  get redirectUrl(): string | undefined {
    if (this.#o.auth.grant === 'client_credentials') return undefined;
    return `http://127.0.0.1:${this.#o.auth.redirect_port}/callback`;
  }

  get clientMetadataUrl(): string | undefined {
    return this.#o.auth.client_metadata_url;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { auth } = this.#o;
    const method =
      auth.client_auth ?? (auth.private_key_file ? 'private_key_jwt' : this.#secret ? undefined : 'none');
    return {
      client_name: auth.client_name,
      redirect_uris: this.redirectUrl ? [this.redirectUrl] : [],
      grant_types:
        auth.grant === 'client_credentials'
          ? ['client_credentials']
          : ['authorization_code', 'refresh_token'],
      response_types: auth.grant === 'client_credentials' ? [] : ['code'],
      ...(method ? { token_endpoint_auth_method: method } : {}),
      // The SDK's client-credentials token request reads its scope here: step-up has to reach it.
      ...((this.#asked ?? auth.scope) ? { scope: this.#asked ?? auth.scope } : {}),
    };
  }

  /** The scopes the next authorization asks for (undefined: the configured ones). */
  ask(scope: string | undefined): void {
    this.#asked = scope;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const record = await this.load();
    const { auth } = this.#o;
    if (auth.client_id === undefined) return record.client;
    const issuer = auth.issuer ?? record.boundIssuer;
    return {
      client_id: auth.client_id,
      ...(this.#secret !== undefined ? { client_secret: this.#secret } : {}),
      ...(auth.client_auth !== undefined && auth.client_auth !== 'private_key_jwt'
        ? { token_endpoint_auth_method: auth.client_auth }
        : {}),
      ...(issuer !== undefined ? { issuer } : {}),
    } as OAuthClientInformationMixed;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    const issuer = (info as { issuer?: string }).issuer;
    // A pre-registered client's id and secret come from organism.yaml, never from the store: only
    // the authorization server it was first used with is kept, so it is never sent to another.
    if (this.#o.auth.client_id !== undefined) {
      if (issuer !== undefined && this.#o.auth.issuer === undefined)
        await this.#save({ boundIssuer: issuer });
      return;
    }
    await this.#save({ client: info as OAuthRecord['client'] });
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    return (await this.load()).tokens;
  }

  /** True when the tokens kept have (nearly) reached their expiry. */
  async expired(): Promise<boolean> {
    const at = (await this.load()).tokens?.expires_at;
    return at !== undefined && Date.now() >= at;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const stored: StoredTokens = { ...tokens };
    if (typeof tokens.expires_in === 'number') {
      const lifetime = tokens.expires_in * 1000;
      stored.expires_at = Date.now() + lifetime - Math.min(EXPIRY_SKEW_MS, lifetime / 10);
    }
    await this.#save({ tokens: stored });
  }

  /** Tokens the server refused: dropped (the kept registration stays unless `all`). */
  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier' || scope === 'discovery') return;
    const change: Partial<OAuthRecord> = {};
    if (scope === 'all' || scope === 'tokens') change.tokens = undefined;
    if (scope === 'all' || scope === 'client') change.client = undefined;
    await this.#save(change);
  }

  state(): string {
    this.#state = randomBytes(16).toString('base64url');
    return this.#state;
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw new McpError('mcp.protocol', 'no authorization is under way');
    return this.#verifier;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    const redirectUri = this.redirectUrl as string;
    const code = this.#o.agent.authorize(url, { redirectUri, state: this.#state ?? '' });
    // Awaited by takeCode; until then a refusal (the daemon's agent) is not an unhandled one.
    code.catch(() => {});
    this.#code = code;
  }

  /** The code the user agent brought back for the authorization just started. */
  takeCode(): Promise<string> {
    const code = this.#code;
    this.#code = undefined;
    if (!code) return Promise.reject(new McpError('mcp.protocol', 'no authorization is under way'));
    return code;
  }

  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (this.#o.auth.grant !== 'client_credentials') return undefined;
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    if (scope) params.set('scope', scope);
    return params;
  }
}
