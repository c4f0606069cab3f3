/**
 * The daemon's logger: pino, JSON lines on stdout, level from organism.log_level (changed in place
 * by a reload). Lines about a message carry `thread` (and `listener`), so one grep follows a
 * conversation; request lines carry the token's name, never the token, and no line carries a
 * secret the daemon knows (knownSecrets, in any of its forms).
 */
import pino, { type Logger } from 'pino';
import { knownSecrets } from '../audit/redact.ts';

export interface LoggerOptions {
  level: pino.LevelWithSilent;
  organism: string;
  /** Where lines go; default stdout. */
  destination?: pino.DestinationStream;
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
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}
