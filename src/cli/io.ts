/** Where a command writes. Tests pass a capturing implementation; the CLI uses the process streams. */
export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
  /** Whole standard input as text (for `guard check`). */
  readStdin(): Promise<string>;
  /** Standard input line by line, for streaming commands. */
  stdinLines(): AsyncIterable<string>;
}

/**
 * Exit code when the reader of the output went away (`organism status | head`): 128 + SIGPIPE, what
 * a shell reports for a program a broken pipe stopped, so `set -o pipefail` scripts see it alike.
 */
export const BROKEN_PIPE_EXIT = 141;

let pipesGuarded = false;

/**
 * A write to a closed stdout or stderr ends the command with one line (on stderr, while it is open)
 * and BROKEN_PIPE_EXIT, instead of an uncaught EPIPE and its stack.
 */
function guardPipes(): void {
  if (pipesGuarded) return;
  pipesGuarded = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    const why = error.code === 'EPIPE' ? 'the reader closed it (broken pipe)' : error.message;
    try {
      process.stderr.write(`organism: output stopped: ${why}\n`);
    } catch {}
    process.exit(error.code === 'EPIPE' ? BROKEN_PIPE_EXIT : 1);
  });
  process.stderr.on('error', (error: NodeJS.ErrnoException) =>
    process.exit(error.code === 'EPIPE' ? BROKEN_PIPE_EXIT : 1),
  );
}

export function processIo(): CommandIo {
  guardPipes();
  return {
    out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
    async readStdin() {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    async *stdinLines() {
      const { createInterface } = await import('node:readline');
      const rl = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
      for await (const line of rl) yield line;
    },
  };
}

/** An in-memory CommandIo for tests. */
export function captureIo(stdin = ''): CommandIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (text) => stdout.push(text),
    err: (text) => stderr.push(text),
    readStdin: async () => stdin,
    async *stdinLines() {
      for (const line of stdin.split('\n')) if (line.length > 0) yield line;
    },
  };
}
