/**
 * The tool half of `organism validate`: loads the same catalog the daemon loads (the built-in tools
 * and the user's `tool_modules`), registers it, and checks every grant and tool_config as the
 * dispatcher will at start. Without it, validate could say ok for a file the daemon then refuses.
 */
import type { OrganismConfig } from '../config/types.ts';
import { ConfigError, type ConfigIssue, ToolRegistrationError } from '../errors.ts';
import { mcpIdentityGrants, renameIdentityIssues } from '../mcp/config.ts';
import { mcpPlaceholders } from '../mcp/tool-config.ts';
import { type CatalogEntry, loadToolCatalog, loadUserTools, PACKAGE_ROOT } from './catalog.ts';
import { defaultDispatcherDefaults } from './dispatcher.ts';
import { ToolRegistry } from './registry.ts';
import { resolveListeners } from './tool-config.ts';

/** Every problem with the organism's tools and grants, as config issues; [] when the daemon would accept them. */
export async function checkOrganismTools(
  config: Pick<OrganismConfig, 'file' | 'listeners' | 'tool_modules'>,
  root: string = PACKAGE_ROOT,
): Promise<ConfigIssue[]> {
  const issues: ConfigIssue[] = [];
  const catalog: CatalogEntry[] = [];
  const attempt = async (path: string, load: () => Promise<CatalogEntry[]>) => {
    try {
      catalog.push(...(await load()));
    } catch (error) {
      if (!(error instanceof ToolRegistrationError)) throw error;
      issues.push({ file: config.file, path, message: error.message });
    }
  };
  await attempt('', () => loadToolCatalog(root));
  const modules = config.tool_modules ?? [];
  for (let i = 0; i < modules.length; i++) {
    await attempt(`tool_modules[${i}]`, () => loadUserTools([modules[i] as string]));
  }
  const registry = new ToolRegistry();
  for (const entry of catalog) {
    try {
      registry.register(entry.definition, { module: entry.module });
    } catch (error) {
      if (!(error instanceof ToolRegistrationError)) throw error;
      issues.push({ file: config.file, path: 'tool_modules', message: error.message });
    }
  }
  // A grant of a tool whose module failed would only repeat that failure as "unknown tool".
  if (issues.length > 0) return issues;
  // MCP servers' tools (`<server>.<tool>`) are checked by name and tool_config, without starting them.
  for (const definition of mcpPlaceholders(config)) registry.register(definition);
  try {
    const defaults = defaultDispatcherDefaults();
    // The `mcp:` identity's grants are checked as the dispatcher will: one more listener.
    resolveListeners([...config.listeners, ...mcpIdentityGrants(config)], registry, defaults, config.file);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...renameIdentityIssues(error.issues, config.listeners.length));
  }
  return issues;
}
