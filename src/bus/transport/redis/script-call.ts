/**
 * A script call (EVALSHA, EVAL when the connection has not loaded the script yet) written without
 * ioredis's generic command path, for the batch's call of several hundred arguments per turn.
 *
 * ioredis builds a command by copying its arguments with `Array.prototype.flat` (≈ 0.25 µs an
 * argument, ten times a plain copy), spreads them twice more on the way (the scripting function's
 * rest parameter, `[sha, ...args]`), then writes it as a string of five parts per argument, each
 * with its `Buffer.byteLength`: ≈ 370 µs of the daemon's CPU for a turn of 30 messages (≈ 350
 * arguments), a sixth of what a message costs it (docs/internals/benchmarks.md). Here the
 * arguments stay the one array the batch built, and the command is written as one string, its
 * lengths counted once over the whole text when it is all ASCII (the usual case; per argument
 * otherwise).
 *
 * It is still an ioredis Command, sent with `sendCommand`: queueing while disconnected, reply
 * matching, a cluster's slot routing (from the keys in `args`) and reply decoding are the client's.
 * What ioredis's Script adds is kept: a connection's first call sends EVAL with the script's text,
 * later ones EVALSHA, and a NOSCRIPT answer (Redis restarted or flushed its scripts) sends it again
 * as EVAL.
 */
import { createHash } from 'node:crypto';
import { Command } from 'ioredis';

/** A script and the connections (sockets) known to have it loaded. */
export interface LoadedScript {
  readonly lua: string;
  readonly sha: string;
  readonly loaded: WeakSet<object>;
}

export function loadedScript(lua: string): LoadedScript {
  return { lua, sha: createHash('sha1').update(lua).digest('hex'), loaded: new WeakSet() };
}

/** What sendCommand takes: a Redis or a Cluster client. */
interface Sender {
  sendCommand(command: Command): unknown;
}

/**
 * Calls `script` with `args`: its sha (replaced by the script when it goes as EVAL), the number of
 * keys, the keys, then ARGV. The array is the command's own from here on; resolves with the reply.
 */
export function callScript(client: Sender, script: LoadedScript, args: string[]): Promise<unknown> {
  const command = new ScriptCommand(script, args);
  const reply = command.promise.catch((error: Error) => {
    if (!error.message.includes('NOSCRIPT')) throw error;
    const again = new ScriptCommand(script, args);
    client.sendCommand(again);
    return again.promise;
  });
  client.sendCommand(command);
  return reply;
}

class ScriptCommand extends Command {
  constructor(
    readonly script: LoadedScript,
    args: string[],
  ) {
    super('evalsha', [], { replyEncoding: 'utf8' });
    // Set after the constructor, which would copy them (flat) and look at each (stringifyArguments).
    this.args = args;
  }

  override toWritable(socket: object): string {
    const { script } = this;
    const reject = this.reject;
    this.reject = (error: Error) => {
      if (error.message.includes('NOSCRIPT')) script.loaded.delete(socket);
      reject.call(this, error);
    };
    if (!script.loaded.has(socket)) {
      script.loaded.add(socket);
      this.name = 'eval';
      this.args[0] = script.lua;
    } else if (this.name === 'eval') {
      this.name = 'evalsha';
      this.args[0] = script.sha;
    }
    return encode(this.name, this.args as string[]);
  }
}

/** `\r\n$<n>\r\n` for lengths below 1,024: most arguments' prefix, made once. */
const PREFIXES = Array.from({ length: 1_024 }, (_, n) => `\r\n$${n}\r\n`);

function prefix(length: number): string {
  return length < PREFIXES.length ? PREFIXES[length]! : `\r\n$${length}\r\n`;
}

/**
 * The command in RESP: each argument's length in characters, which is its length in bytes when
 * the whole text is ASCII (a byte per character); else again with each argument's UTF-8 length.
 */
export function encode(name: string, args: readonly string[]): string {
  let text = `*${args.length + 1}\r\n$${name.length}\r\n${name}`;
  for (const arg of args) text += prefix(arg.length) + arg;
  text += '\r\n';
  if (Buffer.byteLength(text) === text.length) return text;
  text = `*${args.length + 1}\r\n$${Buffer.byteLength(name)}\r\n${name}`;
  for (const arg of args) text += prefix(Buffer.byteLength(arg)) + arg;
  return `${text}\r\n`;
}
