/**
 * A client for BaseX's client/server protocol (docs.basex.org, "Server Protocol"), as `basexserver`
 * speaks it on TCP: one connection is one session, requests run one at a time on it, so calls are
 * queued. Debian's basex package ships the server but not `basexhttp` (no Jetty, so no REST API),
 * which is why the backend speaks this protocol rather than REST.
 *
 * Wire format: strings are UTF-8 ended by \0 (a \0 or \xFF inside is escaped with \xFF). After the
 * server's greeting "realm:nonce\0" the client sends "user\0" and md5(md5(user:realm:password) +
 * nonce) + "\0"; the server answers \0 (in) or \1. A command is "text\0", answered by
 * "result\0info\0" and a status byte; a query command is one code byte and its \0-ended arguments,
 * answered by "result\0" and a status byte (\1 followed by "error\0" on failure).
 */
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { LibrarianError } from '../../src/errors.ts';

export interface BasexClientOptions {
  host: string;
  port: number;
  user: string;
  /** Read when a connection is opened, never stored in an error. */
  password: () => string;
  /** Connect and log-in limit (default 10 s). */
  connectTimeoutMs?: number;
}

/** An item of a query result: its XDM type code (see ITEM_TYPES) and its serialization. */
export interface BasexItem {
  type: number;
  value: string;
}

/** The type codes RESULTS sends before each item (BaseX's server protocol, "Types"). */
export const ITEM_TYPES = {
  function: 7,
  text: 9,
  processingInstruction: 10,
  element: 11,
  document: 13,
  attribute: 14,
  comment: 15,
  map: 30,
  array: 31,
} as const;

/** The server reported an error for this request (a query error, a failed command). */
export class BasexServerError extends Error {}

const QUERY = 0;
const CLOSE = 2;
const BIND = 3;
const RESULTS = 4;
const UPDATING = 0x1e;

function md5(text: string): string {
  return createHash('md5').update(text).digest('hex');
}

function encode(text: string): Buffer {
  const raw = Buffer.from(text, 'utf8');
  if (!raw.includes(0) && !raw.includes(0xff)) return Buffer.concat([raw, Buffer.from([0])]);
  const out: number[] = [];
  for (const byte of raw) {
    if (byte === 0 || byte === 0xff) out.push(0xff);
    out.push(byte);
  }
  out.push(0);
  return Buffer.from(out);
}

/** Bytes arriving on the socket, read as the protocol's strings and status bytes. */
class Reader {
  private buffer: Buffer = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  private failure: Error | null = null;

  push(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    this.wake();
  }

  fail(error: Error): void {
    this.failure ??= error;
    this.wake();
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = null;
    w?.();
  }

  private async more(): Promise<void> {
    if (this.failure) throw this.failure;
    await new Promise<void>((resolve) => {
      this.waiting = resolve;
    });
    if (this.failure) throw this.failure;
  }

  async byte(): Promise<number> {
    while (this.buffer.length === 0) await this.more();
    const b = this.buffer[0]!;
    this.buffer = this.buffer.subarray(1);
    return b;
  }

  /** Bytes up to the next unescaped \0, unescaped. */
  async string(): Promise<string> {
    for (;;) {
      let end = -1;
      let escaped = false;
      for (let i = 0; i < this.buffer.length; i++) {
        const b = this.buffer[i]!;
        if (b === 0xff) {
          escaped = true;
          i++;
        } else if (b === 0) {
          end = i;
          break;
        }
      }
      if (end >= 0) {
        let raw = this.buffer.subarray(0, end);
        this.buffer = this.buffer.subarray(end + 1);
        if (escaped) {
          const out: number[] = [];
          for (let i = 0; i < raw.length; i++) out.push(raw[i] === 0xff ? raw[++i]! : raw[i]!);
          raw = Buffer.from(out);
        }
        return raw.toString('utf8');
      }
      await this.more();
    }
  }
}

class Session {
  private constructor(
    private readonly socket: Socket,
    private readonly reader: Reader,
  ) {}

  static async open(options: BasexClientOptions): Promise<Session> {
    const where = `${options.host}:${options.port}`;
    const socket = connect({ host: options.host, port: options.port });
    socket.setNoDelay(true);
    const reader = new Reader();
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
    socket.on('error', (error) => reader.fail(error));
    socket.on('close', () => reader.fail(new Error('the BaseX server closed the connection')));
    const timer = setTimeout(
      () => socket.destroy(new Error(`no answer within ${options.connectTimeoutMs ?? 10_000} ms`)),
      options.connectTimeoutMs ?? 10_000,
    );
    try {
      const greeting = await reader.string();
      const colon = greeting.indexOf(':');
      const password = options.password();
      const digest =
        colon >= 0
          ? md5(md5(`${options.user}:${greeting.slice(0, colon)}:${password}`) + greeting.slice(colon + 1))
          : md5(md5(password) + greeting);
      socket.write(Buffer.concat([encode(options.user), encode(digest)]));
      if ((await reader.byte()) !== 0) {
        socket.destroy();
        throw new LibrarianError(
          'librarian.auth',
          `BaseX at ${where} refused the credentials of user "${options.user}"`,
          { user: options.user },
        );
      }
    } catch (error) {
      socket.destroy();
      if (error instanceof LibrarianError) throw error;
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new LibrarianError('librarian.backend', `cannot reach BaseX at ${where}: ${code}`, {
        url: `basex://${where}`,
      });
    } finally {
      clearTimeout(timer);
    }
    return new Session(socket, reader);
  }

  get alive(): boolean {
    return !this.socket.destroyed;
  }

  private async status(): Promise<void> {
    if ((await this.reader.byte()) !== 0) throw new BasexServerError(await this.reader.string());
  }

  async command(text: string): Promise<string> {
    this.socket.write(encode(text));
    const result = await this.reader.string();
    const info = await this.reader.string();
    if ((await this.reader.byte()) !== 0) throw new BasexServerError(info);
    return result;
  }

  private async request(code: number, args: string[]): Promise<string> {
    this.socket.write(Buffer.concat([Buffer.from([code]), ...args.map(encode)]));
    const result = await this.reader.string();
    await this.status();
    return result;
  }

  /** Runs a query with its variables bound, and gives every item with its type. */
  async query(text: string, bind: { name: string; value: string; type: string }[]): Promise<BasexItem[]> {
    const id = await this.request(QUERY, [text]);
    try {
      for (const v of bind) await this.request(BIND, [id, v.name, v.value, v.type]);
      this.socket.write(Buffer.concat([Buffer.from([RESULTS]), encode(id)]));
      const items: BasexItem[] = [];
      for (;;) {
        const type = await this.reader.byte();
        if (type === 0) break;
        items.push({ type, value: await this.reader.string() });
      }
      await this.status();
      return items;
    } finally {
      if (this.alive) await this.request(CLOSE, [id]).catch(() => {});
    }
  }

  /** Parses (and compiles) a query without evaluating it: "true" when it is an updating query. */
  async updating(text: string): Promise<string> {
    const id = await this.request(QUERY, [text]);
    try {
      return await this.request(UPDATING, [id]);
    } finally {
      if (this.alive) await this.request(CLOSE, [id]).catch(() => {});
    }
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/**
 * One session, opened on first use and again after it broke; requests are queued on it. A request
 * whose signal aborts destroys the session (the only way the protocol can stop a running query).
 */
export class BasexClient {
  private session: Promise<Session> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly options: BasexClientOptions,
    /** Commands run once on each new session (serializer and parser options). */
    private readonly setup: string[] = [],
  ) {}

  get address(): string {
    return `${this.options.host}:${this.options.port}`;
  }

  private connect(): Promise<Session> {
    this.session ??= (async () => {
      const session = await Session.open(this.options);
      for (const command of this.setup) await session.command(command);
      return session;
    })().catch((error) => {
      this.session = null;
      throw error;
    });
    return this.session;
  }

  private run<T>(work: (session: Session) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const next = this.queue.then(async () => {
      if (this.closed) throw new LibrarianError('librarian.backend', 'the librarian is closing');
      if (signal?.aborted) throw signal.reason;
      const session = await this.connect();
      const onAbort = () => session.destroy();
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        return await work(session);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (!(error instanceof BasexServerError) && !(error instanceof LibrarianError)) {
          // The connection broke: the next request opens a new one.
          this.drop(session);
          throw new LibrarianError(
            'librarian.backend',
            `lost the connection to BaseX at ${this.address}: ${(error as Error).message}`,
          );
        }
        throw error;
      } finally {
        signal?.removeEventListener('abort', onAbort);
        if (!session.alive) this.drop(session);
      }
    });
    this.queue = next.catch(() => {});
    return next;
  }

  private drop(session: Session): void {
    session.destroy();
    this.session = null;
  }

  command(text: string, signal?: AbortSignal): Promise<string> {
    return this.run((s) => s.command(text), signal);
  }

  query(
    text: string,
    bind: { name: string; value: string; type: string }[] = [],
    signal?: AbortSignal,
  ): Promise<BasexItem[]> {
    return this.run((s) => s.query(text, bind), signal);
  }

  /** Parses a query without running it; "true" when it would update. Throws its static errors. */
  parseOnly(text: string, signal?: AbortSignal): Promise<string> {
    return this.run((s) => s.updating(text), signal);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
    const session = await this.session?.catch(() => null);
    session?.destroy();
    this.session = null;
  }
}
