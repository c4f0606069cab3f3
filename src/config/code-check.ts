/**
 * The organism's code may not lie in a workspace: organism.workspace and a stdio MCP server's
 * are writable by every program the sandbox runs there (and by the file tools), and a handler,
 * a tool module, a file either imports or an agent's script found there would be loaded into the
 * daemon, outside every sandbox, at the next reload or `organism dev` save. Checked on the file's
 * data before any module is loaded (validate, run and reload alike), by the path as written and
 * by its real path (a link from the project into a workspace counts).
 */
import { realpathSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { localImportClosure } from '../dev/local-imports.ts';
import type { ConfigIssue } from '../errors.ts';
import { resolveConfigPath } from './defaults.ts';
import { DATA_DIR_PLACEHOLDER } from './schema.ts';
import type { ConfigSource } from './source.ts';

type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Workspace {
  /** How the file names it, for the message: organism.workspace, mcp_servers[0] (files)... */
  name: string;
  forms: string[];
}

export interface CodeInWorkspace {
  issues: ConfigIssue[];
  /** Indexes of listeners whose handler (or a file it imports) lies in a workspace: not to be loaded. */
  listeners: Set<number>;
}

/** `base`: the config file's folder. Reads `data` defensively: it also runs when the schema failed. */
export function checkCodeInWorkspaces(data: unknown, source: ConfigSource, base: string): CodeInWorkspace {
  const found: CodeInWorkspace = { issues: [], listeners: new Set() };
  if (!isObject(data)) return found;
  const organism = isObject(data.organism) ? data.organism : {};
  const dataDir =
    typeof organism.data_dir === 'string' ? resolveConfigPath(organism.data_dir, base) : undefined;
  const path = (value: unknown): string | undefined =>
    typeof value !== 'string' ||
    value === '' ||
    (value.startsWith(DATA_DIR_PLACEHOLDER) && dataDir === undefined)
      ? undefined
      : resolveConfigPath(value, base, dataDir);

  const workspaces: Workspace[] = [];
  const own = path(organism.workspace);
  if (own) workspaces.push({ name: 'organism.workspace', forms: forms(own) });
  (Array.isArray(data.mcp_servers) ? data.mcp_servers : []).forEach((server, i) => {
    if (!isObject(server) || typeof server.command !== 'string') return;
    const given = path(server.workspace);
    const where =
      given ?? (dataDir && typeof server.name === 'string' ? join(dataDir, 'mcp', server.name) : undefined);
    if (where)
      workspaces.push({
        name: `the workspace of MCP server ${String(server.name ?? i)}`,
        forms: forms(where),
      });
  });
  if (workspaces.length === 0) return found;

  const holder = (file: string) => {
    const mine = forms(file);
    return workspaces.find((w) => w.forms.some((ws) => mine.some((f) => within(f, ws))));
  };
  const memo = new Map<string, readonly string[]>();
  /** An issue at `at` when `file`, or a local file it imports (for modules), lies in a workspace. */
  const check = (
    at: (string | number)[],
    file: string | undefined,
    what: string,
    module: boolean,
  ): boolean => {
    if (file === undefined) return false;
    const candidates = module ? [file, ...localImportClosure(file, memo)] : [file];
    for (const candidate of candidates) {
      const workspace = holder(candidate);
      if (!workspace) continue;
      const which = candidate === file ? `${what} ${file}` : `${what} ${file} imports ${candidate}, which`;
      found.issues.push(
        source.issue(
          at,
          `${which} lies in ${workspace.name} (${workspace.forms[0]}), which sandboxed programs and the file tools can write: ` +
            'code there could be rewritten by a tool call and loaded at the next reload. Keep the organism’s code outside every workspace',
        ),
      );
      return true;
    }
    return false;
  };

  (Array.isArray(data.listeners) ? data.listeners : []).forEach((listener, i) => {
    if (!isObject(listener)) return;
    if (check(['listeners', i, 'handler'], path(listener.handler), 'the handler', true))
      found.listeners.add(i);
    const llm = isObject(listener.llm) ? listener.llm : {};
    check(['listeners', i, 'llm', 'script'], path(llm.script), 'the script', false);
  });
  const llm = isObject(data.llm) ? data.llm : {};
  (Array.isArray(llm.backends) ? llm.backends : []).forEach((backend, i) => {
    if (isObject(backend)) check(['llm', 'backends', i, 'script'], path(backend.script), 'the script', false);
  });
  (Array.isArray(data.tool_modules) ? data.tool_modules : []).forEach((entry, i) => {
    check(['tool_modules', i], path(entry), 'the tool module', true);
  });
  for (const key of ['prompt_modules', 'resource_modules'] as const) {
    const entries = data[key];
    (Array.isArray(entries) ? entries : []).forEach((entry, i) => {
      check([key, i], path(entry), `the ${key === 'prompt_modules' ? 'prompt' : 'resource'} module`, true);
    });
  }
  return found;
}

/** The path as written and its real path (as far as it exists). */
function forms(p: string): string[] {
  const real = realOrSelf(p);
  return real === p ? [p] : [p, real];
}

function realOrSelf(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return p;
  }
}

function within(p: string, folder: string): boolean {
  const rel = relative(folder, resolve(p));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}
