/** `organism validate [file] [--config FILE]`: checks organism.yaml and the listener modules it names. */

import { parseArgs } from 'node:util';
import { loadConfig } from '../../config/index.ts';
import { ConfigError, UsageError } from '../../errors.ts';
import { checkMcpWorkspaces } from '../../mcp/config-check.ts';
import { checkOrganismTools } from '../../tools/check.ts';
import type { CommandIo } from '../io.ts';
import { reportConfigError } from '../report.ts';

export const summary =
  'check organism.yaml (schema, names, peers, tags, handler and tool modules, grants); exit 0 or 1';

const HELP = `usage: organism validate [file] [--config FILE]

Checks an organism.yaml against organism.schema.json, checks listener names, peers, root tags and
descriptions, loads every handler module and every tool module (the built-in ones and your
tool_modules) and your prompt_modules and resource_modules, and checks each listener's tools and
tool_config as 'organism run' will. Prints "ok: <file> (N listeners)" and exits 0, or prints every
problem as file:line:column: key.path: message and exits 1.

options:
  -c, --config FILE   the file to check (default ./organism.yaml); same as the [file] argument
  -h, --help          show this help

examples:
  npx organism validate
  npx organism validate deploy/organism.yaml`;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${HELP}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (positionals.length > 1)
    throw new UsageError(`expected at most one file, got ${positionals.length}\n${HELP}`);
  if (positionals.length === 1 && values.config !== undefined && positionals[0] !== values.config) {
    throw new UsageError(`give the file either as an argument or with --config, not both\n${HELP}`);
  }
  const file = positionals[0] ?? values.config ?? './organism.yaml';
  try {
    const loaded = await loadConfig(file);
    // The tools the daemon would register, and the grants it would check: validate and run agree.
    const toolIssues = await checkOrganismTools(loaded.config);
    // A stdio MCP server refused at its start (its workspace in the data dir) is told now.
    toolIssues.push(...checkMcpWorkspaces(loaded.config));
    // The project's MCP prompts and resources, loaded as the MCP server will (the SDK only if any).
    if (loaded.config.prompt_modules.length + loaded.config.resource_modules.length > 0) {
      const { checkFeatureModules } = await import('../../mcp/server/features/modules.ts');
      toolIssues.push(...(await checkFeatureModules(loaded.config)));
    }
    if (toolIssues.length > 0) throw new ConfigError(toolIssues);
    const n = loaded.listeners.length;
    io.out(`ok: ${file} (${n} listener${n === 1 ? '' : 's'})`);
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return reportConfigError(error, file, io);
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } },
  });
}
