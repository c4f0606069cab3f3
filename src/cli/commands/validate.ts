/** `organism validate [file] [--config FILE]`: checks organism.yaml and the listener modules it names. */

import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../config/index.ts';
import { parseConfigText, readConfigText } from '../../config/read.ts';
import { ConfigError, type ConfigIssue, formatConfigIssue, UsageError } from '../../errors.ts';
import { checkMcpWorkspaces } from '../../mcp/config-check.ts';
import { checkOrganismTools } from '../../tools/check.ts';
import type { CommandIo } from '../io.ts';

export const summary =
  'check organism.yaml (schema, names, peers, tags, handler and tool modules, grants); exit 0 or 1';

const HELP = `usage: organism validate [file] [--config FILE]

Checks an organism.yaml against organism.schema.json, checks listener names, peers, root tags and
descriptions, loads every handler module and every tool module (the built-in ones and your
tool_modules), and checks each listener's tools and tool_config as 'organism run' will. Prints "ok: <file> (N listeners)" and exits 0, or
prints every problem as file:line:column: key.path: message and exits 1.

options:
  -c, --config FILE   the file to check (default ./organism.yaml); same as the [file] argument
  -h, --help          show this help`;

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
    if (toolIssues.length > 0) throw new ConfigError(await positioned(toolIssues, file));
    const n = loaded.listeners.length;
    io.out(`ok: ${file} (${n} listener${n === 1 ? '' : 's'})`);
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const issue of error.issues) io.err(formatConfigIssue(issue));
    const n = error.issues.length;
    io.err(`${file}: ${n} problem${n === 1 ? '' : 's'} found`);
    return 1;
  }
}

/**
 * The tool runtime's issues name a key path only; give each the file as the user named it and the
 * line and column of that path (or its nearest ancestor in the file), like every other issue.
 */
async function positioned(issues: readonly ConfigIssue[], file: string): Promise<ConfigIssue[]> {
  const text = await readConfigText(resolve(file), file);
  const source = typeof text === 'string' ? parseConfigText(text, file).source : undefined;
  return issues.map((issue) => {
    const position = source?.position(keyPath(issue.path));
    return { ...issue, file, ...(position ?? {}) };
  });
}

/** `listeners[0].tools[1]` -> `['listeners', 0, 'tools', 1]`. */
function keyPath(path: string): (string | number)[] {
  return [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] === undefined ? m[1]! : Number(m[2])));
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } },
  });
}
