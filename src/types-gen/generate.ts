/**
 * The text of the `.d.ts` that `organism types` writes (model: `wrangler types`): organism.yaml's
 * listeners, each with the tools granted to it and the peers it may address, merged into the
 * `OrganismTypes` interface the package exports (src/listener/organism-types.ts).
 *
 * Types come from where they are declared, so nothing is written twice:
 * - a tool of the project (a module of tool_modules with one tool): its own declaration, through
 *   `typeof import('./tools/x.js').default` (arguments as a caller gives them, run's result);
 * - Organism's built-in tools, a module declaring several tools, and peers: their JSON Schema
 *   (a Standard Schema's JSON form), written as a literal type and mapped by `Infer`. Peers are
 *   not typed through their modules: a listener's type depends on its peers', and two listeners
 *   that address each other would make TypeScript's inference circular.
 * - a granted tool no module declares (an MCP server's `<server>.<tool>`): any arguments.
 */
import { dirname, relative, sep } from 'node:path';
import type { LoadedListener } from '../config/load.ts';
import { jsonSchemaForm } from '../schema/json-form.ts';
import { isStandardSchema } from '../schema/standard.ts';
import type { CatalogEntry } from '../tools/catalog.ts';
import type { JsonSchema } from '../xml/json-schema.ts';

export interface TypesInput {
  /** organism.yaml's listeners with their loaded modules. */
  listeners: readonly LoadedListener[];
  /** Every tool the organism registers (built-in and tool_modules), with its module. */
  catalog: readonly CatalogEntry[];
  /** The payload schema of an agent without a handler module (the runtime's task payload). */
  agentSchema: JsonSchema;
  /** Where the file is written: module paths in it are relative to its folder. */
  outFile: string;
  /** Modules under this folder are the project's own (typed by import); others by JSON Schema. */
  projectDir: string;
}

export const GENERATED_HEADER =
  '// Written by `organism types` from organism.yaml. Do not edit: run `organism types` again after a change.';

export function generateTypes(input: TypesInput): string {
  const tools = toolTypes(input);
  const payloads = new Map(input.listeners.map((l) => [l.config.name, payloadType(l, input.agentSchema)]));
  const entries = input.listeners.map((listener) => {
    const granted = listener.config.tools.map(
      (name) => `${key(name)}: ${tools.get(name) ?? '{ args: Record<string, unknown>; result: unknown }'};`,
    );
    const peers = listener.config.peers.map((peer) => `${key(peer)}: ${payloads.get(peer) ?? 'unknown'};`);
    return `      ${key(listener.config.name)}: {\n${block('tools', granted)}${block('peers', peers)}      };`;
  });
  return `${GENERATED_HEADER}
import type { Infer, ToolArgsOf, ToolResultOf } from 'organism';

declare module 'organism' {
  interface OrganismTypes {
    listeners: {
${entries.join('\n')}
    };
  }
}

export {};
`;
}

function block(name: string, lines: string[]): string {
  if (lines.length === 0) return `        ${name}: {};\n`;
  return `        ${name}: {\n${lines.map((l) => `          ${indentRest(l, '          ')}`).join('\n')}\n        };\n`;
}

/** Each registered tool's `{ args; result }` type, by name. */
function toolTypes(input: TypesInput): Map<string, string> {
  const perModule = new Map<string, number>();
  for (const { module } of input.catalog) perModule.set(module, (perModule.get(module) ?? 0) + 1);
  const types = new Map<string, string>();
  for (const { definition, module } of input.catalog) {
    const own = isInside(module, input.projectDir) && perModule.get(module) === 1;
    if (own) {
      const ref = `typeof import(${JSON.stringify(importPath(input.outFile, module))}).default`;
      types.set(definition.name, `{ args: ToolArgsOf<${ref}>; result: ToolResultOf<${ref}> }`);
      continue;
    }
    const args = isStandardSchema(definition.args)
      ? jsonSchemaForm(definition.args, `tool ${definition.name}'s args`)
      : definition.args;
    types.set(definition.name, `{ args: Infer<${literal(args)}, 'in'>; result: unknown }`);
  }
  return types;
}

/** What a sender gives a listener: its payload schema's input type. */
function payloadType(listener: LoadedListener, agentSchema: JsonSchema): string {
  const schema = listener.definition?.payload.schema ?? (listener.config.agent ? agentSchema : undefined);
  return schema === undefined ? 'Record<string, unknown>' : `Infer<${literal(schema)}, 'in'>`;
}

/** A JSON value as a TypeScript literal type (JSON is one: quoted keys, literal leaves, tuples). */
function literal(schema: JsonSchema): string {
  return JSON.stringify(schema, null, 2);
}

function indentRest(text: string, indent: string): string {
  return text.replaceAll('\n', `\n${indent}`);
}

function key(name: string): string {
  return JSON.stringify(name);
}

function isInside(file: string, dir: string): boolean {
  const rel = relative(dir, file);
  return rel !== '' && !rel.startsWith('..') && !rel.split(sep).includes('node_modules');
}

/** `./tools/word-count.js` for tools/word-count.ts, as NodeNext resolves it from the file's folder. */
function importPath(outFile: string, module: string): string {
  let rel = relative(dirname(outFile), module).split(sep).join('/');
  rel = rel
    .replace(/\.ts$/, '.js')
    .replace(/\.mts$/, '.mjs')
    .replace(/\.cts$/, '.cjs');
  return rel.startsWith('.') ? rel : `./${rel}`;
}
