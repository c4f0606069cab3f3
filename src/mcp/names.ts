/**
 * How MCP tools are named. In organism.yaml (grants, tool_config, audit) a server's tool is
 * `<server>.<tool>`, the tool's own name kept as the server spells it. Models' function calling
 * accepts only `[a-zA-Z0-9_-]{1,64}`, so agents are offered `<server>__<tool>` with every other
 * character turned into `_`, cut to 64 characters with a short hash when longer. This file imports
 * nothing of the SDK: grants are checked without starting any server.
 */
import { createHash } from 'node:crypto';

/** A server's `name` in mcp_servers. */
export const SERVER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
/** A tool name as MCP allows it (the spec's SEP-986 characters). */
export const REMOTE_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** `<server>.<tool>`, as granted. */
export const QUALIFIED_NAME = /^([a-z][a-z0-9_-]{0,31})\.([A-Za-z0-9_.-]{1,128})$/;

export function qualifiedName(server: string, tool: string): string {
  return `${server}.${tool}`;
}

/** `{ server, tool }` of a granted `<server>.<tool>`, or null for a native tool's name. */
export function splitQualified(name: string): { server: string; tool: string } | null {
  const m = QUALIFIED_NAME.exec(name);
  return m ? { server: m[1] as string, tool: m[2] as string } : null;
}

const MODEL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The function name a model is offered for a tool: native names unchanged; `fs.read_file` becomes
 * `fs__read_file`; characters a provider refuses become `_`; a name over 64 characters keeps its
 * first 55 and gets `_` and 8 hex digits of its SHA-256, so two long names stay apart.
 */
export function modelToolName(name: string): string {
  if (MODEL_NAME.test(name)) return name;
  const mapped = name.replace('.', '__').replace(/[^a-zA-Z0-9_-]/g, '_');
  if (mapped.length <= 64) return mapped;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${mapped.slice(0, 55)}_${hash}`;
}
