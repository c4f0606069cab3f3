/**
 * The tools an organism knows, in registration order, with unique names. Each declaration is
 * checked when it is registered, so a bad tool fails the start with its name in the message rather
 * than surfacing on the first call.
 */

import { sep } from 'node:path';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { ToolRegistrationError } from '../errors.ts';
import { CODE_ROOT } from '../package-root.ts';
import { jsonSchemaForm } from '../schema/json-form.ts';
import { isStandardSchema, type StandardSchemaV1 } from '../schema/standard.ts';
import type { JsonSchema } from '../xml/json-schema.ts';
import { compileSchema } from './schema.ts';
import { CAPABILITIES, type ResolvedToolDefinition, type ToolDefinition } from './types.ts';

const NAME = /^[a-z][a-z0-9_]{0,63}$/;
/** An external (MCP) tool: `<server>.<tool>`, the tool's name as its server spells it (src/mcp/names.ts). */
const EXTERNAL_NAME = /^[a-z][a-z0-9_-]{0,31}\.[A-Za-z0-9_.-]{1,128}$/;
const GUARDS = ['shell', 'file', 'web', 'email'];

export interface RegisteredTool {
  /** As declared, but with `args` in JSON Schema form when the module gave a Standard Schema. */
  readonly definition: ResolvedToolDefinition;
  /** Absolute path of the module file that declared it (native tools); integrity hashes this file. */
  readonly module?: string;
  /** The `run` function as registered; the integrity check compares against it before each call. */
  readonly run: ToolDefinition['run'];
  /** ajv's check of a JSON Schema `args`; unused (it throws) when `standardArgs` is set. */
  readonly validateArgs: ValidateFunction;
  /** The Standard Schema the module declared as `args`: it checks the arguments (the dispatcher). */
  readonly standardArgs?: StandardSchemaV1;
  /** Top-level argument names, for "expected one of" hints. */
  readonly argNames: string[];
}

export class ToolRegistry {
  readonly #tools = new Map<string, RegisteredTool>();

  /**
   * Throws ToolRegistrationError naming the tool and what is wrong with it. `validate` replaces the
   * compiled `args` schema (MCP tools: a server's schema, checked by its own lenient ajv).
   */
  register(
    definition: ToolDefinition,
    options: { module?: string; validate?: ValidateFunction } = {},
  ): RegisteredTool {
    const entry = this.#check(definition, options);
    const existing = this.#tools.get(definition.name);
    if (existing) {
      throw new ToolRegistrationError(
        definition.name,
        `is registered twice${existing.module ? ` (first in ${existing.module})` : ''}; tool names must be unique`,
      );
    }
    this.#tools.set(definition.name, entry);
    return entry;
  }

  /**
   * Registers an external tool again under its name (its server listed it anew: description or
   * schema changed), or for the first time. Native tools cannot be replaced.
   */
  replace(definition: ToolDefinition, options: { validate?: ValidateFunction } = {}): RegisteredTool {
    if (definition?.source !== 'external')
      throw new ToolRegistrationError(String(definition?.name), 'only external tools can be replaced');
    const entry = this.#check(definition, options);
    this.#tools.set(definition.name, entry);
    return entry;
  }

  #check(
    definition: ToolDefinition,
    options: { module?: string; validate?: ValidateFunction },
  ): RegisteredTool {
    const label = typeof definition?.name === 'string' ? definition.name : String(definition?.name);
    const fail = (message: string): never => {
      throw new ToolRegistrationError(label, options.module ? `${message} (in ${options.module})` : message);
    };
    if (definition === null || typeof definition !== 'object') fail('is not a tool definition object');
    const external = definition.source === 'external' && EXTERNAL_NAME.test(String(definition.name));
    if (typeof definition.name !== 'string' || !(NAME.test(definition.name) || external)) {
      fail('name must be snake_case: a lowercase letter, then lowercase letters, digits or _ (at most 64)');
    }
    if (typeof definition.description !== 'string' || definition.description.trim().length < 10) {
      fail('needs a description of at least 10 characters, written so an LLM knows when to use it');
    }
    if (!(CAPABILITIES as readonly string[]).includes(definition.capability)) {
      fail(`capability ${JSON.stringify(definition.capability)} is not one of ${CAPABILITIES.join(', ')}`);
    }
    if (definition.source !== 'native' && definition.source !== 'external') {
      fail(`source must be 'native' or 'external', not ${JSON.stringify(definition.source)}`);
    }
    if (typeof definition.readOnly !== 'boolean') fail('readOnly must be true or false');
    if (definition.guard !== undefined && !GUARDS.includes(definition.guard)) {
      fail(`guard ${JSON.stringify(definition.guard)} is not one of ${GUARDS.join(', ')}`);
    }
    if (typeof definition.run !== 'function') fail('run must be a function');
    if (definition.unavailable !== undefined && typeof definition.unavailable !== 'function') {
      fail('unavailable must be a function when given');
    }
    if (definition.notice !== undefined && typeof definition.notice !== 'function') {
      fail('notice must be a function when given');
    }
    const standardArgs = isStandardSchema(definition.args) ? definition.args : undefined;
    let args = definition.args as JsonSchema;
    if (standardArgs) {
      try {
        args = jsonSchemaForm(standardArgs, 'args');
      } catch (error) {
        fail((error as Error).message);
      }
    }
    if (args === null || typeof args !== 'object' || Array.isArray(args))
      fail('args must be a JSON Schema object or a Standard Schema (zod, valibot, ...)');
    if (args.type !== 'object') fail("args schema must describe an object (type: 'object')");
    // Organism's own tools (their schemas compile in test/tools/builtin-schemas.test.ts) compile
    // their argument schema on their first call: ~40 ajv compiles at start cost a daemon that uses
    // a few of them ~120 ms and ~7 MB. Every other tool's schemas compile here, so a mistake in
    // one is an error at registration.
    const ownTool = isOwnTool(options.module);
    let validateArgs: ValidateFunction;
    try {
      validateArgs =
        options.validate ??
        (standardArgs ? checkedByStandard(label) : ownTool ? compiledOnFirstCall(args) : compileSchema(args));
    } catch (error) {
      return fail(`args schema does not compile: ${(error as Error).message}`);
    }
    if (definition.config !== undefined && !ownTool) {
      try {
        compileSchema(definition.config);
      } catch (error) {
        fail(`config schema does not compile: ${(error as Error).message}`);
      }
    }
    const properties = (args.properties ?? {}) as Record<string, unknown>;
    const entry: RegisteredTool = {
      definition: standardArgs ? { ...definition, args } : (definition as ResolvedToolDefinition),
      run: definition.run,
      validateArgs,
      ...(standardArgs ? { standardArgs } : {}),
      argNames: Object.keys(properties),
      ...(options.module === undefined ? {} : { module: options.module }),
    };
    return entry;
  }

  get(name: string): RegisteredTool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** Registration order. */
  list(): RegisteredTool[] {
    return [...this.#tools.values()];
  }

  names(): string[] {
    return [...this.#tools.keys()];
  }

  get size(): number {
    return this.#tools.size;
  }
}

const OWN_TOOL_FOLDERS = [`${CODE_ROOT}${sep}tools${sep}`, `${CODE_ROOT}${sep}librarian${sep}tools${sep}`];

/** A module in Organism's own tools/ or librarian/tools/ (not a user's tool_modules). */
function isOwnTool(module: string | undefined): boolean {
  return module !== undefined && OWN_TOOL_FOLDERS.some((folder) => module.startsWith(folder));
}

/**
 * The ajv slot of a tool whose Standard Schema checks its arguments: there is one check per tool,
 * so one that reached for ajv here would be a bug, and says so rather than passing everything.
 */
function checkedByStandard(tool: string): ValidateFunction {
  return (() => {
    throw new Error(`the arguments of ${tool} are checked by its Standard Schema (standardArgs), not ajv`);
  }) as unknown as ValidateFunction;
}

/** A validator that compiles `schema` when first called; `errors` as the compiled one sets them. */
function compiledOnFirstCall(schema: Parameters<typeof compileSchema>[0]): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= compileSchema(schema);
    const ok = compiled(data);
    validate.errors = compiled.errors ?? null;
    return ok;
  }) as ValidateFunction;
  validate.errors = null;
  return validate;
}
