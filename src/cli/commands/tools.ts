import { UsageError } from '../../errors.ts';
import type { CommandIo } from '../io.ts';

export const summary = '(not built yet)';

export async function run(_argv: string[], _io: CommandIo): Promise<number> {
  throw new UsageError('tools is not built yet');
}
