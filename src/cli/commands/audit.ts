/** `organism audit [--tail N] [--verify]`: prints the audit log and checks its hash chain. */
import { readAuditLines, verifyAuditFile } from '../../audit/read.ts';
import { loadConfig } from '../../config/index.ts';
import { UsageError } from '../../errors.ts';
import { toolPaths } from '../../tools/runtime.ts';
import { CONFIG_OPTION, parseCommandArgs } from '../args.ts';
import type { CommandIo } from '../io.ts';

export const summary = 'print the tool-call audit log; --verify checks its hash chain (exit 1 if broken)';

const HELP = `usage: organism audit [--tail N] [--verify] [--config FILE] [--file PATH]

Prints the audit log (one JSON record per line: tool calls and threats), oldest first.

options:
  -n, --tail N        only the last N records
      --verify        check the hash chain instead of printing; exits 1 naming the first broken line
  -c, --config FILE   organism.yaml whose audit.path to read (default ./organism.yaml)
      --file PATH     read this audit file instead of the configured one
  -h, --help          show this help`;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      ...CONFIG_OPTION,
      tail: { type: 'string', short: 'n' },
      verify: { type: 'boolean' },
      file: { type: 'string' },
    },
    false,
  );
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  let tail: number | undefined;
  if (values.tail !== undefined) {
    if (!/^\d+$/.test(values.tail))
      throw new UsageError(`--tail must be a whole number, not '${values.tail}'`);
    tail = Number(values.tail);
  }
  const path =
    values.file ?? toolPaths((await loadConfig(values.config, { loadModules: false })).config).audit;
  if (values.verify) {
    const report = await verifyAuditFile(path);
    if (report.ok) {
      io.out(`ok: ${path}: ${report.records} record${report.records === 1 ? '' : 's'}, hash chain intact`);
      return 0;
    }
    io.err(
      `${path}:${report.line}: record ${report.line} ${report.reason}; the ${report.records} record(s) before it verify`,
    );
    return 1;
  }
  for (const line of await readAuditLines(path, tail)) io.out(line);
  return 0;
}
