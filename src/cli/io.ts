/** Where a command writes. Tests pass a capturing implementation; the CLI uses the process streams. */
export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
  /** Whole standard input as text (for `guard check`). */
  readStdin(): Promise<string>;
  /** Standard input line by line, for streaming commands. */
  stdinLines(): AsyncIterable<string>;
}

export function processIo(): CommandIo {
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
