/** `organism types`: writes the `.d.ts` that types ctx.tools.call and ctx.send by organism.yaml. */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { AGENT_TASK_SCHEMA } from '../../agent/definition.ts';
import { loadConfig } from '../../config/index.ts';
import { ConfigError } from '../../errors.ts';
import { loadOrganismCatalog } from '../../tools/catalog.ts';
import { generateTypes } from '../../types-gen/generate.ts';
import { CONFIG_OPTION, parseCommandArgs } from '../args.ts';
import type { CommandIo } from '../io.ts';
import { reportConfigError } from '../report.ts';

export const summary = 'write organism-env.d.ts: ctx.tools.call and ctx.send typed by organism.yaml';

/** The file's name beside organism.yaml when --out is not given. */
export const DEFAULT_TYPES_FILE = 'organism-env.d.ts';

const HELP = `usage: organism types [--config FILE] [--out FILE]

Reads organism.yaml and the listener and tool modules it names, and writes a TypeScript
declaration file. With it, in a listener module that says which listener it is
(defineListener({ name: 'hello', ... })), ctx.tools.call accepts only the tools organism.yaml
grants that listener, with their argument and result types, and ctx.send only its peers, with
their payload types: a misspelled tool or peer is a type error. Run it again after changing
organism.yaml (organism init's npm test does).

options:
  -c, --config FILE   organism.yaml to read (default ./organism.yaml)
  -o, --out FILE      where to write (default ${DEFAULT_TYPES_FILE} beside organism.yaml)
  -h, --help          show this help

examples:
  npx organism types
  npx organism types --out src/organism-env.d.ts`;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs(argv, { ...CONFIG_OPTION, out: { type: 'string', short: 'o' } }, false);
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const file = values.config ?? './organism.yaml';
  const projectDir = dirname(resolve(file));
  const outFile = resolve(values.out ?? resolve(projectDir, DEFAULT_TYPES_FILE));
  let text: string;
  try {
    const { config, listeners } = await loadConfig(file);
    const catalog = await loadOrganismCatalog(config);
    text = generateTypes({ listeners, catalog, agentSchema: AGENT_TASK_SCHEMA, outFile, projectDir });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return reportConfigError(error, file, io);
  }
  // Written whole or not at all: a type check running meanwhile never reads half a file.
  await mkdir(dirname(outFile), { recursive: true });
  const temp = `${outFile}.${process.pid}.tmp`;
  await writeFile(temp, text);
  await rename(temp, outFile);
  const shown = relative(process.cwd(), outFile);
  io.out(`wrote ${shown.startsWith('..') || shown === '' ? outFile : shown}`);
  return 0;
}
