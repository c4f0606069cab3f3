/** `organism pause LISTENER`: see listener-control.ts. */
import type { CommandIo } from '../io.ts';
import { runOperator } from '../operator.ts';
import { listenerCommand } from './listener-control.ts';

export const summary = 'pause a listener of a running daemon: its messages wait in its queue';

export function run(argv: string[], io: CommandIo): Promise<number> {
  return runOperator(listenerCommand('pause'), argv, io);
}
