/**
 * The daemon's logger: pino, JSON lines on stdout, level from organism.log_level (changed in place
 * by a reload). Lines about a message carry `thread` (and `listener`), so one grep follows a
 * conversation; request lines carry the token's name, never the token.
 */
import pino, { type Logger } from 'pino';

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
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}
