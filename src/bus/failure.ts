/**
 * Why a handler failed, for operators: the error's class, its message and the top frame of the
 * listener's own module (file:line). It is recorded in the thread as a `failure` record (not a
 * delivery) that viewers see in the API, `organism threads ID` and `organism tail`; the sender
 * still gets only the generic `<SystemError>` (failures.ts), which never says more.
 */
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { redactString } from '../audit/redact.ts';
import { escapeText } from '../xml/codec.ts';
import type { SystemErrorCode } from './system.ts';

/** The kind of the record (see MESSAGE_KINDS). */
export const FAILURE_KIND = 'failure';

/** Longest error message kept in the record; a handler's message can be anything it likes. */
const MAX_MESSAGE_CHARS = 1000;
/** Longest error class name kept (a class can be named anything). */
const MAX_CLASS_CHARS = 200;
/** A frame's location longer than this (a `data:` URL of a transpiled module) is not worth showing. */
const MAX_LOCATION_CHARS = 300;

/** Organism's own code (src/ here, dist/ once compiled): frames in it are the runtime's, not the user's. */
const RUNTIME_DIR = fileURLToPath(new URL('..', import.meta.url));

export interface FailureCause {
  /** What failed: handler.failed or handler.timeout, as the SystemError's code. */
  code: SystemErrorCode;
  /** The error's class (`TypeError`, `HandlerTimeoutError`), or the type of a non-Error thrown. */
  error: string;
  /** Its message, redacted and cut to 1,000 characters. */
  message: string;
  /** Top frame of the listener's module as `file:line` (relative to the working folder when inside it). */
  at?: string;
}

/**
 * The cause of a thrown `error` in a handler whose module is `module` (absolute path; undefined for
 * an agent), with the frame in that module when the stack has one, else the top frame outside the
 * runtime and node_modules.
 */
export function describeFailure(error: unknown, module: string | undefined): FailureCause {
  // What was thrown is the handler's: a Proxy whose traps throw, a getter that throws, a class
  // named with a secret. Reading it never throws out of here, and every part is redacted and cut.
  const cause: FailureCause = {
    code: 'handler.failed',
    error: cut(redactString(safely(() => errorClass(error), 'unknown')), MAX_CLASS_CHARS),
    message: cut(
      redactString(safely(() => errorMessage(error), '(the thrown value could not be read)')),
      MAX_MESSAGE_CHARS,
    ),
  };
  const at = safely(() => topFrame(error instanceof Error ? error.stack : undefined, module), undefined);
  if (at) cause.at = at;
  return cause;
}

function safely<T>(read: () => T, otherwise: T): T {
  try {
    const value = read();
    return typeof value === 'string' || value === undefined ? value : otherwise;
  } catch {
    return otherwise;
  }
}

/** The cause of a handler that did not finish within `ms`. */
export function describeTimeout(listener: string, ms: number): FailureCause {
  return {
    code: 'handler.timeout',
    error: 'HandlerTimeoutError',
    message: `handler ${listener} timed out after ${ms} ms`,
  };
}

/** The record's payload: `<failure>` with the listener, the code, the error, its message and place. */
export function failureXml(listener: string, cause: FailureCause): string {
  return (
    `<failure><listener>${escapeText(listener)}</listener><code>${cause.code}</code>` +
    `<error>${escapeText(cause.error)}</error><message>${escapeText(cause.message)}</message>` +
    (cause.at ? `<at>${escapeText(cause.at)}</at>` : '') +
    '</failure>'
  );
}

function errorClass(error: unknown): string {
  if (error instanceof Error) {
    const name = error.constructor?.name;
    return name && name !== 'Object' ? name : error.name || 'Error';
  }
  if (error === null) return 'null';
  return typeof error === 'object' ? (error.constructor?.name ?? 'object') : typeof error;
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** `(file:///a/b.ts:12:5)`, `at /a/b.ts:12:5`, `at async fn (node:internal/...:1:2)`. */
const FRAME = /^\s*at (?:.*?\()?(.+?):(\d+):\d+\)?\s*$/;

/** `file:line` of the first frame in `module`, else of the first frame that is the user's at all. */
export function topFrame(stack: string | undefined, module: string | undefined): string | undefined {
  if (!stack) return undefined;
  let fallback: string | undefined;
  for (const line of stack.split('\n')) {
    const match = FRAME.exec(line);
    if (!match) continue;
    const file = toPath(match[1]!);
    if (file === undefined) continue;
    if (module !== undefined && file === module) return place(file, match[2]!);
    if (fallback === undefined && isUsers(file)) fallback = place(file, match[2]!);
  }
  return fallback;
}

/** An absolute path for a frame's location; undefined for node internals and `data:`/`eval` code. */
function toPath(location: string): string | undefined {
  if (location.startsWith('file://')) {
    try {
      return fileURLToPath(location.split('?')[0]!);
    } catch {
      return undefined;
    }
  }
  return location.startsWith('/') || /^[A-Za-z]:\\/.test(location) ? location : undefined;
}

function isUsers(file: string): boolean {
  return !file.startsWith(RUNTIME_DIR) && !file.includes(`${sep}node_modules${sep}`);
}

function place(file: string, line: string): string | undefined {
  const rel = relative(process.cwd(), file);
  const shown = rel !== '' && !rel.startsWith('..') ? rel : file;
  const at = `${shown}:${line}`;
  return at.length <= MAX_LOCATION_CHARS ? at : undefined;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}...[${text.length - max} more chars]`;
}
