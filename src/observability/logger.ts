/**
 * The daemon's logger: pino on stdout, JSON lines (what journald and `jq` want) unless stdout is a
 * terminal, where pino-pretty prints them for a person; level from organism.log_level (changed in
 * place by a reload). Lines about a message carry `thread` (and `listener`), so one grep follows a
 * conversation; request lines carry the token's name, never the token, and no line carries a
 * secret the daemon knows (knownSecrets, in any of its forms).
 */
import { createRequire } from 'node:module';
import pino, { type Logger } from 'pino';
import { knownSecrets, redactString } from '../audit/redact.ts';

export type LogFormat = 'json' | 'pretty';

export interface LoggerOptions {
  level: pino.LevelWithSilent;
  organism: string;
  /** Where lines go (always JSON there); default stdout. */
  destination?: pino.DestinationStream;
  /** On stdout: default logFormat(process.stdout), pretty on a terminal and JSON lines otherwise. */
  format?: LogFormat;
}

/** Pretty for a person at a terminal; JSON lines for everything else (a pipe, a file, journald). */
export function logFormat(stdout: { isTTY?: boolean } = process.stdout): LogFormat {
  return stdout.isTTY === true ? 'pretty' : 'json';
}

/**
 * pino-pretty, loaded only when a terminal asks for it: a daemon logging JSON (a service) never
 * pays its load time or memory. Synchronous, like pino's own stdout, so the last lines before an
 * exit are not lost. It reads the JSON line after the redaction hook, so it shows no secret either.
 */
function prettyStdout(): pino.DestinationStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as (options: object) => pino.DestinationStream;
  return pretty({
    destination: 1,
    sync: true,
    colorize: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,organism',
  });
}

/** Paths whose values never reach a log line, whatever a caller passes in. */
export const LOG_REDACT_PATHS = [
  'authorization',
  'token',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.authorization',
  '*.token',
  '*.password',
  '*.api_key',
];

/**
 * pino's error serializer, or a stand-in when the value cannot be read. Its message and stack are
 * scrubbed of credential shapes as the failure record's message is (`postgres://app:pw@db` in a
 * handler's error), besides the known secrets every line is scrubbed of.
 */
function safeErr(err: unknown): unknown {
  try {
    const out = pino.stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
    if (out === null || typeof out !== 'object') return out;
    for (const key of ['message', 'stack'] as const) {
      if (typeof out[key] === 'string') out[key] = redactString(out[key] as string);
    }
    return out;
  } catch {
    return { type: 'unreadable', message: 'the thrown value could not be read' };
  }
}

export function createLogger(options: LoggerOptions): Logger {
  const config: pino.LoggerOptions = {
    level: options.level,
    base: { organism: options.organism, pid: process.pid },
    redact: { paths: LOG_REDACT_PATHS, censor: '[REDACTED]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Every line, whatever field or message carries it: the secrets the daemon holds, in every
    // form audit/redact.ts knows (prefixes, base64, other case, without `sk-`). No secrets known,
    // no scan.
    hooks: { streamWrite: (line) => knownSecrets.redact(line) },
    // A handler's thrown value is logged as `err`; it can be anything (a Proxy whose traps throw),
    // and a log line must never throw into the code that reports the failure.
    serializers: { err: safeErr },
  };
  if (options.destination) return pino(config, options.destination);
  return (options.format ?? logFormat()) === 'pretty' ? pino(config, prettyStdout()) : pino(config);
}
