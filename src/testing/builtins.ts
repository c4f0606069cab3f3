/**
 * Built-in tools by name in testListener() and testAgent(): `tools: ['key_value_set', 'webhook',
 * wordCount]`. A name stands for Organism's own tool, loaded the way the daemon loads it, so the test
 * runs the real tool behind the real dispatcher; only where it would leave the process does the kit
 * stand in (stores in the test's temp folder, recorders for webhook and send_email: see
 * tool-runtime.ts).
 *
 * run_command, fetch_url and web_search have nothing to record them: they start programs on this
 * machine or reach the network. A test names them only with a fake (`fakes: { fetch_url: run }`:
 * the built-in's arguments, tool_config, guard and capability with the test's run), or with `live`
 * (the real tool, as in production); naming them alone is refused, so a test never reaches the
 * network by accident. Any built-in can be faked so; a ToolDefinition of a built-in's name is a
 * tool of the test's own, as any other.
 */
import { TestKitError } from '../errors.ts';
import { loadToolCatalog } from '../tools/catalog.ts';
import { didYouMean } from '../tools/tool-config.ts';
import type { ToolDefinition, ToolRunContext } from '../tools/types.ts';

/** Organism's own tools (test/testing checks this list against the tools/ and librarian/ folders). */
export const BUILTIN_TOOLS = [
  'calculate',
  'fetch_url',
  'key_value_delete',
  'key_value_get',
  'key_value_set',
  'list_dir',
  'read_file',
  'run_command',
  'send_email',
  'web_search',
  'webhook',
  'write_file',
  'librarian_delete',
  'librarian_get',
  'librarian_list',
  'librarian_query',
  'librarian_search',
  'librarian_store',
] as const;

export type BuiltinToolName = (typeof BUILTIN_TOOLS)[number];

/** A tool granted in a test: a built-in by name, or a ToolDefinition (your own, or a fake). */
export type TestTool = BuiltinToolName | ToolDefinition;

/** A built-in's run, replaced: its arguments (checked against the built-in's schema) and context. */
export type ToolFake = (args: any, ctx: ToolRunContext) => unknown;

/** Fakes of built-ins by name: each stands in for the built-in of its name in `tools`. */
export type ToolFakes = Partial<Record<BuiltinToolName, ToolFake>>;

/** Built-ins that can run in a test as they run in production only, when the test says so. */
export const LIVE_TOOLS = ['run_command', 'fetch_url', 'web_search', 'webhook', 'send_email'] as const;
export type LiveToolName = (typeof LIVE_TOOLS)[number];

/** The built-ins a test cannot name without `live` or a fake: nothing stands in for them. */
const NEEDS_LIVE: Readonly<Record<string, string>> = {
  run_command: 'starts programs on this machine (in the sandbox)',
  fetch_url: 'reaches the network',
  web_search: 'reaches the network (a search API)',
};

/** Loaded once per test process: every testListener() of a file shares the same definitions. */
let catalog: Promise<ReadonlyMap<string, ToolDefinition>> | undefined;

function builtinDefinitions(): Promise<ReadonlyMap<string, ToolDefinition>> {
  if (!catalog) {
    const loading = loadToolCatalog().then(
      (entries) => new Map(entries.map((e) => [e.definition.name, e.definition])),
    );
    catalog = loading;
    loading.catch(() => {
      if (catalog === loading) catalog = undefined;
    });
  }
  return catalog;
}

/**
 * The definitions to register for `tools`, in the order given. Throws TestKitError for a name that
 * is no built-in (with did-you-mean), a tool given twice, a `live` name the tools do not name, and
 * run_command / fetch_url / web_search named with neither `live` nor a fake.
 */
export async function resolveTools(
  tools: readonly TestTool[],
  live: readonly string[] = [],
  fakes: ToolFakes = {},
): Promise<ToolDefinition[]> {
  const named = tools.filter((t): t is BuiltinToolName => typeof t === 'string');
  const seen = new Set<string>();
  for (const [i, tool] of tools.entries()) {
    if (
      typeof tool !== 'string' &&
      (typeof tool !== 'object' || tool === null || typeof tool.name !== 'string')
    ) {
      throw new TestKitError(
        'testing.invalid_option',
        `tools[${i}]: ${JSON.stringify(tool) ?? String(tool)} is neither a built-in tool's name nor a ToolDefinition (an object with a name, args and run)`,
      );
    }
    const name = typeof tool === 'string' ? tool : tool.name;
    if (seen.has(name)) {
      throw new TestKitError(
        'testing.duplicate_tool',
        `tools: ${JSON.stringify(name)} is given twice; give a built-in by name or a ToolDefinition of that name (a fake), not both`,
        { tool: name },
      );
    }
    seen.add(name);
  }
  const known: readonly string[] = BUILTIN_TOOLS;
  for (const name of named) {
    if (!known.includes(name)) {
      throw new TestKitError(
        'testing.unknown_tool',
        `tools: ${JSON.stringify(name)} is not a built-in tool${didYouMean(String(name), known)}; built-in tools: ${known.join(', ')}. Give your own tools as ToolDefinitions`,
        { tool: name },
      );
    }
  }
  for (const name of live) {
    if (!(LIVE_TOOLS as readonly string[]).includes(name) || !named.includes(name as BuiltinToolName)) {
      throw new TestKitError(
        'testing.unknown_tool',
        `live: ${JSON.stringify(name)} is not one of the built-in tools this test names in tools (${named.join(', ') || 'none'}); live takes ${LIVE_TOOLS.join(', ')}`,
        { tool: name },
      );
    }
  }
  for (const [name, fake] of Object.entries(fakes)) {
    const problem =
      typeof fake !== 'function'
        ? 'is not a function (args, ctx) => result'
        : live.includes(name)
          ? 'is in live too; a tool is faked or live, not both'
          : !named.includes(name as BuiltinToolName)
            ? `is not one of the built-in tools this test names in tools (${named.join(', ') || 'none'})`
            : null;
    if (problem)
      throw new TestKitError('testing.invalid_option', `fakes: ${JSON.stringify(name)} ${problem}`, {
        tool: name,
      });
  }
  for (const name of named) {
    const why = NEEDS_LIVE[name];
    if (why && !live.includes(name) && !fakes[name]) {
      throw new TestKitError(
        'testing.needs_fake',
        `tools: ${name} ${why}, and nothing stands in for it in a test. Give it a fake, fakes: { ${name}: (args) => result } (the built-in's arguments, tool_config and guard, your result), or run the real one with live: ['${name}']`,
        { tool: name },
      );
    }
  }
  const definitions = named.length > 0 ? await builtinDefinitions() : new Map<string, ToolDefinition>();
  return tools.map((tool) => {
    if (typeof tool !== 'string') return tool;
    const definition = definitions.get(tool);
    if (!definition)
      throw new TestKitError('testing.unknown_tool', `tools: no module of Organism declares ${tool}`, {
        tool,
      });
    const fake = fakes[tool];
    return fake ? faked(definition, fake) : definition;
  });
}

/**
 * The built-in with the test's run: its arguments, tool_config keys, guard, capability and side
 * effect stay, so the dispatcher judges the fake's calls as the real one's. Nothing makes a fake
 * unavailable (no smtp section, no API key): it needs none.
 */
function faked(definition: ToolDefinition, fake: ToolFake): ToolDefinition {
  const { unavailable: _unavailable, notice: _notice, ...rest } = definition;
  return { ...rest, run: async (args, ctx) => fake(args, ctx) };
}
