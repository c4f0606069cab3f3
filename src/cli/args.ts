/** Shared flag parsing for commands: node:util parseArgs with errors turned into UsageError. */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from '../errors.ts';

export const CONFIG_OPTION = { config: { type: 'string', short: 'c', default: './organism.yaml' } } as const;

export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: T,
  allowPositionals = true,
) {
  try {
    return parseArgs({
      args: argv,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
