/**
 * SMTP for send_email: the organism.yaml `smtp` section with its defaults, the nodemailer
 * transport built from it (shared through the runtime's resource cache), and the mapping of
 * nodemailer failures to MailErrors. The password comes from the environment variable named by
 * `smtp.password_env` and appears in no message: every error text is scrubbed of it.
 */
import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { schemaDefault } from '../../src/config/schema.ts';
import { MailError } from '../../src/errors.ts';
import type { ToolServices } from '../../src/tools/types.ts';
import { parseAddress } from './mail-headers.ts';

export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  user: string | undefined;
  passwordEnv: string | undefined;
  /** Where passwordEnv is looked up (ToolServices.env: the process's over the .env); default process.env. */
  env?: NodeJS.ProcessEnv;
  from: string;
  /** Limits on each SMTP phase, so a silent server fails the call instead of hanging it. */
  connectionTimeoutMs: number;
  greetingTimeoutMs: number;
  socketTimeoutMs: number;
}

/** The section's defaults (port, secure) are organism.schema.json's; these are not settings there. */
export const SMTP_DEFAULTS = {
  connectionTimeoutMs: 10_000,
  greetingTimeoutMs: 10_000,
  socketTimeoutMs: 30_000,
} as const;

export type MailTransport = Transporter<SMTPTransport.SentMessageInfo>;

/** The smtp section with defaults applied, or undefined when organism.yaml has none. */
export function smtpSettings(
  config: { readonly [section: string]: unknown },
  env?: NodeJS.ProcessEnv,
): SmtpSettings | undefined {
  const raw = config.smtp as Record<string, unknown> | undefined;
  if (raw === undefined || raw === null || typeof raw !== 'object') return undefined;
  return {
    host: String(raw.host ?? ''),
    port: typeof raw.port === 'number' ? raw.port : schemaDefault<number>('smtp.port'),
    secure: typeof raw.secure === 'boolean' ? raw.secure : schemaDefault<boolean>('smtp.secure'),
    user: typeof raw.user === 'string' ? raw.user : undefined,
    passwordEnv: typeof raw.password_env === 'string' ? raw.password_env : undefined,
    ...(env === undefined ? {} : { env }),
    from: String(raw.from ?? ''),
    connectionTimeoutMs: SMTP_DEFAULTS.connectionTimeoutMs,
    greetingTimeoutMs: SMTP_DEFAULTS.greetingTimeoutMs,
    socketTimeoutMs: SMTP_DEFAULTS.socketTimeoutMs,
  };
}

/** Why mail cannot be sent with this config and environment, or null when it can. */
export function smtpUnavailable(
  config: { readonly [section: string]: unknown },
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  const s = smtpSettings(config, env);
  if (!s) return 'no smtp section in organism.yaml';
  if (!s.host) return 'smtp.host is empty in organism.yaml';
  try {
    parseAddress('smtp.from', s.from);
  } catch {
    return `smtp.from in organism.yaml is not one e-mail address: ${JSON.stringify(s.from)}`;
  }
  if (s.passwordEnv !== undefined && !env[s.passwordEnv]) {
    return `smtp.password_env names ${s.passwordEnv}, which is not set in the environment`;
  }
  return null;
}

function smtpPassword(s: SmtpSettings): string | undefined {
  return s.passwordEnv === undefined ? undefined : (s.env ?? process.env)[s.passwordEnv] || undefined;
}

/**
 * Key of the transport in the tool resource cache: an SMTP transport made on first use, unless
 * organism/testing put its recorder there first.
 */
export const SMTP_RESOURCE = 'smtp';

/** The shared transport for this organism; the runtime closes it at shutdown. */
export function mailTransport(services: ToolServices, s: SmtpSettings): Promise<MailTransport> {
  return services.resources.get<MailTransport>(
    SMTP_RESOURCE,
    // nodemailer is loaded with the first mail: most organisms never send one.
    async () => {
      const { createTransport } = await import('nodemailer');
      const pass = smtpPassword(s);
      return createTransport({
        host: s.host,
        port: s.port,
        secure: s.secure,
        ...(s.user === undefined ? {} : { auth: { user: s.user, ...(pass === undefined ? {} : { pass }) } }),
        connectionTimeout: s.connectionTimeoutMs,
        greetingTimeout: s.greetingTimeoutMs,
        socketTimeout: s.socketTimeoutMs,
        // Mail content comes from agents: never let it make nodemailer read files or fetch URLs.
        disableFileAccess: true,
        disableUrlAccess: true,
      });
    },
    (transport) => transport.close(),
  );
}

const CONNECTION_CODES = new Set(['ECONNECTION', 'ESOCKET', 'ETIMEDOUT', 'EDNS', 'ETLS', 'EPROXY']);

/** A nodemailer failure as a MailError naming host:port, with the password scrubbed out. */
export function mailFailure(err: unknown, s: SmtpSettings): MailError {
  const e = err as Error & { code?: string; response?: string };
  const where = `${s.host}:${s.port}`;
  const pass = smtpPassword(s);
  const scrub = (text: string) => (pass ? text.split(pass).join('***') : text);
  const reason = scrub(e?.message ?? String(err));
  if (e?.code === 'EAUTH' || e?.code === 'ENOAUTH') {
    return new MailError(
      'mail.auth',
      `SMTP server ${where} refused the login${s.user ? ` of user ${JSON.stringify(s.user)}` : ''}: ${reason}`,
      { server: where },
    );
  }
  if (e?.code && CONNECTION_CODES.has(e.code)) {
    return new MailError('mail.connection', `cannot reach SMTP server ${where}: ${reason}`, {
      server: where,
    });
  }
  if (e?.code === 'EENVELOPE') {
    return new MailError('mail.rejected', `SMTP server ${where} refused the message: ${reason}`, {
      server: where,
    });
  }
  return new MailError('mail.send_failed', `sending through SMTP server ${where} failed: ${reason}`, {
    server: where,
  });
}
