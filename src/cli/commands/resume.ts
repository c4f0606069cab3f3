/** `organism resume LISTENER`: see listener-control.ts. */
import type { CommandIo } from '../io.ts';
import { runOperator } from '../operator.ts';
import { listenerCommand } from './listener-control.ts';

export const summary = 'resume a paused listener of a running daemon';

export function run(argv: string[], io: CommandIo): Promise<number> {
  return runOperator(listenerCommand('resume'), argv, io);
}
