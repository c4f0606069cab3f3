/**
 * One writer at a time per audit log, across processes (the daemon, `organism tools call`,
 * `organism audit --acknowledge`): without it two of them can read the same last line and both
 * chain onto it, or both chain a checkpoint onto the same one, which verify would then report.
 *
 * The lock is a Linux abstract Unix socket (no file: the OS frees it when its holder dies, so a
 * crash leaves nothing stale) whose name is an HMAC of the log's path under the audit key: only a
 * process with the key can find it. Its holder keeps it for its life and writes without asking
 * anyone (nothing on the daemon's hot path). Another writer connects instead, answers a challenge
 * with the key (a program that finds the name in /proc/net/unix cannot get a turn), and is told
 * `go` between two of the holder's writes; its turn ends when it closes the connection (or after
 * `turnMs`). Elsewhere than Linux there is no lock: the writers' checks (continuity.ts) remain.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { AuditError } from '../errors.ts';
import type { AuditKey } from './key.ts';

export interface WriterLockOptions {
  /** Longest a turn given to another writer may last (ms); then the holder goes on. */
  turnMs?: number;
  /** Longest to wait for a turn (ms) before the write fails (and is retried by the writer). */
  waitMs?: number;
}

function defaults(): Required<WriterLockOptions> {
  return { turnMs: 10_000, waitMs: 15_000 };
}

const LABEL = 'organism-audit-writer-lock\0';

export class WriterLock {
  readonly #name: string;
  readonly #key: AuditKey;
  readonly #options: Required<WriterLockOptions>;
  #server: Server | undefined;
  /** A turn another process has now (holder side). */
  #lent: Socket | undefined;
  #lentEnded: Promise<void> = Promise.resolve();
  readonly #waiting: Socket[] = [];
  #busy = false;
  /** Our turn on another holder's lock (client side). */
  #turn: Socket | undefined;

  constructor(logPath: string, key: AuditKey, options: WriterLockOptions = {}) {
    this.#key = key;
    this.#options = { ...defaults(), ...options };
    const digest = createHmac('sha256', key.secret)
      .update(`${LABEL}${resolve(logPath)}`)
      .digest('hex');
    this.#name = `\0organism-audit-${digest.slice(0, 40)}`;
  }

  static supported(): boolean {
    return process.platform === 'linux';
  }

  /** Waits for this process's turn to write. */
  async acquire(): Promise<void> {
    if (!WriterLock.supported()) return;
    const deadline = Date.now() + this.#options.waitMs;
    for (;;) {
      if (this.#server) {
        await this.#lentEnded;
        if (this.#lent === undefined) {
          this.#busy = true;
          return;
        }
        continue;
      }
      if (await this.#listen()) continue;
      const turn = await this.#ask().catch(() => undefined);
      if (turn) {
        this.#turn = turn;
        return;
      }
      if (Date.now() > deadline) {
        throw new AuditError(
          'audit.write',
          `no turn to write the audit log within ${this.#options.waitMs} ms: another writer holds it`,
        );
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  release(): void {
    if (this.#turn) {
      this.#turn.end();
      this.#turn = undefined;
      return;
    }
    this.#busy = false;
    this.#lendNext();
  }

  /** Stops holding the lock (the writer closes); those waiting ask again and one of them takes it. */
  async close(): Promise<void> {
    this.#turn?.destroy();
    this.#turn = undefined;
    for (const socket of this.#waiting.splice(0)) socket.destroy();
    this.#lent?.destroy();
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }

  #listen(): Promise<boolean> {
    return new Promise((resolveListen) => {
      const server = createServer((socket) => this.#greet(socket));
      server.once('error', () => resolveListen(false));
      server.listen(this.#name, () => {
        server.unref();
        this.#server = server;
        resolveListen(true);
      });
    });
  }

  /** Holder side: a challenge; a right answer queues the writer for a turn. */
  #greet(socket: Socket): void {
    const nonce = randomBytes(16).toString('hex');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('error', () => socket.destroy());
    socket.setTimeout(this.#options.turnMs, () => socket.destroy());
    socket.write(`${nonce}\n`);
    const onData = (chunk: string) => {
      text += chunk;
      if (!text.includes('\n')) {
        if (text.length > 200) socket.destroy();
        return;
      }
      socket.off('data', onData);
      const answer = Buffer.from(text.slice(0, text.indexOf('\n')), 'utf8');
      const expected = Buffer.from(this.#mac(nonce), 'utf8');
      if (answer.length !== expected.length || !timingSafeEqual(answer, expected)) {
        socket.destroy();
        return;
      }
      this.#waiting.push(socket);
      socket.once('close', () => {
        const at = this.#waiting.indexOf(socket);
        if (at >= 0) this.#waiting.splice(at, 1);
      });
      this.#lendNext();
    };
    socket.on('data', onData);
  }

  #lendNext(): void {
    if (this.#busy || this.#lent !== undefined) return;
    const next = this.#waiting.shift();
    if (!next) return;
    this.#lent = next;
    this.#lentEnded = new Promise<void>((done) => {
      const end = () => {
        if (this.#lent === next) this.#lent = undefined;
        done();
        this.#lendNext();
      };
      next.once('close', end);
      next.once('end', () => next.destroy());
    });
    next.write('go\n');
  }

  /** Client side: connect, answer the challenge, wait for `go`. */
  #ask(): Promise<Socket> {
    return new Promise((resolveTurn, reject) => {
      const socket = connect(this.#name);
      let text = '';
      let answered = false;
      socket.setEncoding('utf8');
      socket.once('error', reject);
      socket.once('close', () => reject(new Error('the holder closed')));
      socket.on('data', (chunk: string) => {
        text += chunk;
        if (!answered && text.includes('\n')) {
          answered = true;
          const nonce = text.slice(0, text.indexOf('\n'));
          text = text.slice(text.indexOf('\n') + 1);
          socket.write(`${this.#mac(nonce)}\n`);
        }
        if (answered && text.includes('go\n')) {
          socket.removeAllListeners('data');
          socket.removeAllListeners('close');
          socket.removeAllListeners('error');
          socket.on('error', () => {});
          resolveTurn(socket);
        }
      });
    });
  }

  #mac(nonce: string): string {
    return createHmac('sha256', this.#key.secret).update(`${LABEL}${nonce}`).digest('hex');
  }
}
