/**
 * An MCP server's tools as tools of the registry, named `<server>.<tool>`, so they pass the same
 * dispatcher as native ones (grants, revocation, integrity, arguments, capability scope, guard,
 * rate limit, loop check, timeout, result cap, audit). Each is registered again when its server
 * lists it anew; a granted tool the server does not (yet) offer stays registered, unavailable.
 *
 * Trust: a server's annotations are claims. Unless this listener's tool_config for the tool says
 * `trusted: true`, they count for nothing. A tool's capability is, in order: the operator's
 * `mcp_servers[].capabilities[tool]`, the listener's `tool_config[...].capability`, `read` for a
 * tool a trusted server marks readOnlyHint (and not destructiveHint). Otherwise (destructive,
 * unannotated, or untrusted) the tool is unavailable until one of the first two names one.
 */
import { ErrorCode, McpError as SdkError } from '@modelcontextprotocol/sdk/types.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { McpError, OrganismError } from '../../errors.ts';
import type { ToolRegistry } from '../../tools/registry.ts';
import type { Capability, ToolConfig, ToolDefinition } from '../../tools/types.ts';
import type { JsonSchema } from '../../xml/json-schema.ts';
import type { ResolvedServerConfig } from '../config.ts';
import { qualifiedName } from '../names.ts';
import { mcpToolConfigSchema } from '../tool-config.ts';
import type { McpConnection, RemoteTool } from './connection.ts';
import { type PinState, pinProblem } from './pins.ts';
import { resultValue } from './result.ts';
import { compileRemote } from './schema.ts';

/** Longest server description an agent is shown (the rest is cut, saying how much). */
const MAX_DESCRIPTION_CHARS = 8000;
/**
 * How long after the dispatcher's timeout the SDK gives up on the request and sends the server
 * notifications/cancelled: later than the dispatcher's timer, so the dispatcher usually answers
 * first. Not always: both timers count from the loop's cached clock, and a GC pause or a schema
 * compiled between the deadline and the request can put the SDK's first, so its timeout error is
 * turned into a Timeout as well (timedOut below).
 */
const CANCEL_AFTER_MS = 5;
/** Largest input schema (JSON) an agent is sent; a tool with a larger one is unavailable. */
const MAX_SCHEMA_BYTES = 64 * 1024;

/** The SDK's own request timeout as the runtime's Timeout; undefined for any other error. */
function timedOut(error: unknown, name: string, timeoutMs: number): OrganismError | undefined {
  if (!(error instanceof SdkError) || error.code !== ErrorCode.RequestTimeout) return undefined;
  return new OrganismError('Timeout', `tool ${name} timed out after ${timeoutMs} ms`);
}

/** A validator that refuses everything, naming why (a schema that does not compile). */
function refuseAll(reason: string): ValidateFunction {
  const fn = (() => {
    fn.errors = [{ instancePath: '', schemaPath: '#', keyword: 'schema', params: {}, message: reason }];
    return false;
  }) as unknown as ValidateFunction;
  fn.errors = null;
  return fn;
}

export function capabilityOf(
  server: ResolvedServerConfig,
  remote: RemoteTool | undefined,
  tool: string,
  config: ToolConfig,
): Capability | null {
  const operator = server.capabilities[tool];
  if (operator) return operator;
  if (typeof config.capability === 'string') return config.capability as Capability;
  const hints = remote?.annotations;
  if (config.trusted === true && hints?.readOnlyHint === true && hints.destructiveHint !== true)
    return 'read';
  return null;
}

export interface ToolsetDeps {
  registry: ToolRegistry;
  connection: McpConnection;
  pins: () => PinState;
  /** Names (`<server>.<tool>`) granted to some listener: registered even before the server lists them. */
  granted: readonly string[];
}

export class ServerToolset {
  readonly #deps: ToolsetDeps;
  readonly #server: ResolvedServerConfig;
  /** Remote tool names registered so far. */
  readonly #names = new Set<string>();
  readonly #unwatch: () => void;

  constructor(deps: ToolsetDeps) {
    this.#deps = deps;
    this.#server = deps.connection.server;
    const prefix = `${this.#server.name}.`;
    for (const name of deps.granted) if (name.startsWith(prefix)) this.#names.add(name.slice(prefix.length));
    this.sync();
    this.#unwatch = deps.connection.watch(() => this.sync());
  }

  /** Registers every known tool with what the server last listed. */
  sync(): void {
    const listed = this.#deps.connection.tools;
    for (const name of listed.keys()) this.#names.add(name);
    for (const name of this.#names) {
      const remote = listed.get(name);
      const { definition, validate } = this.#definition(name, remote);
      try {
        this.#deps.registry.replace(definition, { validate });
      } catch {
        // What a server lists costs at most that tool (it stays unregistered), never the runtime.
      }
    }
  }

  /** Integrity of one of this server's tools (dispatcher step 4), or null when it passes. */
  integrity(tool: string): string | null {
    const remote = this.#deps.connection.tools.get(tool);
    return remote ? pinProblem(this.#deps.pins(), this.#server.name, remote) : null;
  }

  close(): void {
    this.#unwatch();
  }

  #definition(
    tool: string,
    remote: RemoteTool | undefined,
  ): { definition: ToolDefinition; validate: ValidateFunction } {
    const server = this.#server;
    const connection = this.#deps.connection;
    const name = qualifiedName(server.name, tool);
    let validate: ValidateFunction;
    let schemaProblem: string | null = null;
    // Every agent granted the tool is sent its description and schema with each model call: a
    // server's megabyte would fill the context and the token budget. Bounded (invariant 5).
    const schemaBytes = Buffer.byteLength(JSON.stringify(remote?.inputSchema ?? {}));
    if (schemaBytes > MAX_SCHEMA_BYTES) {
      schemaProblem = `its input schema is ${schemaBytes} bytes, over the ${MAX_SCHEMA_BYTES} an agent is sent`;
      validate = refuseAll(schemaProblem);
    } else {
      try {
        validate = compileRemote(remote?.inputSchema ?? { type: 'object' });
      } catch (error) {
        schemaProblem = `its input schema does not compile: ${(error as Error).message}`;
        validate = refuseAll(schemaProblem);
      }
    }
    // The server's words, said to be the server's: an agent's prompt shows where a tool comes from.
    const whole = remote?.description.trim() ?? '';
    const said =
      whole.length <= MAX_DESCRIPTION_CHARS
        ? whole
        : `${whole.slice(0, MAX_DESCRIPTION_CHARS)}... [${whole.length - MAX_DESCRIPTION_CHARS} more characters not shown]`;
    const description = `Tool ${tool} of MCP server ${server.name}${said ? `: ${said}` : remote ? '.' : ' (not listed yet).'}`;
    const schema = (
      schemaBytes > MAX_SCHEMA_BYTES ? { type: 'object' } : { ...(remote?.inputSchema ?? {}), type: 'object' }
    ) as JsonSchema;
    // A listing that fails its pin (changed since it was signed: a rug pull) is refused at call
    // time, and its words are withheld from agents too: an injected description or schema would
    // steer the model towards the other tools it holds. Read at each use, so signing the change
    // offers the words again without a relisting.
    const pins = this.#deps.pins;
    const changed = () => (remote ? pinProblem(pins(), server.name, remote) : null);
    const withheld = `Tool ${tool} of MCP server ${server.name} (its description is withheld: it changed since it was signed).`;
    const operator = server.capabilities[tool];
    const guard = server.guards[tool];
    const definition: ToolDefinition<Record<string, unknown>> = {
      name,
      get description() {
        return changed() === null ? description : withheld;
      },
      get args() {
        return changed() === null ? schema : ({ type: 'object' } as JsonSchema);
      },
      readOnly: operator === 'read',
      capability: operator ?? 'write',
      capabilityFor: (config) =>
        capabilityOf(server, connection.tools.get(tool), tool, config) ?? operator ?? 'write',
      source: 'external',
      ...(guard ? { guard } : {}),
      sideEffect: operator !== 'read',
      timeoutMs: server.timeout_ms,
      config: mcpToolConfigSchema(guard),
      ...(server.url === undefined && server.sandbox === 'none'
        ? {
            notice: () =>
              `comes from MCP server ${server.name}, which runs without a sandbox (sandbox: none): it can read what the daemon can, its environment and data dir included`,
          }
        : {}),
      unavailable: (_services, config) => {
        const down = connection.reason;
        if (down) return down;
        if (connection.state === 'ready' && !connection.tools.has(tool)) {
          const offered = [...connection.tools.keys()].join(', ') || '(none)';
          return `MCP server ${server.name} does not offer a tool ${tool} (it offers: ${offered})`;
        }
        if (schemaProblem) return schemaProblem;
        if (config && capabilityOf(server, connection.tools.get(tool), tool, config) === null) {
          return (
            `${name} needs a capability named explicitly: set mcp_servers ${server.name}.capabilities.${tool} ` +
            `or this listener's tool_config["${name}"].capability (annotations count only with trusted: true, and only readOnlyHint)`
          );
        }
        return null;
      },
      run: async (args, ctx) => {
        const deadline = performance.now() + ctx.timeoutMs;
        if (connection.state !== 'ready') await connection.start();
        // A lazy server is listed only now: its schema and pin are checked here before anything is sent.
        const now = connection.tools.get(tool);
        if (!now) throw new McpError('mcp.unavailable', `MCP server ${server.name} does not offer ${tool}`);
        // The dispatcher checked pin and schema of the listing this definition was built from;
        // a newer listing (a lazy server's first, or a relisting since) is checked here.
        if (now !== remote) {
          const pin = pinProblem(this.#deps.pins(), server.name, now);
          if (pin) throw new OrganismError('IntegrityFailure', pin, { rule_id: 'mcp.integrity' });
          const check = compileRemote(now.inputSchema);
          if (!check(args)) {
            const why = (check.errors ?? [])
              .map((e) => `${e.instancePath || '(root)'} ${e.message}`)
              .join('; ');
            throw new OrganismError('InvalidArguments', `arguments do not match ${name}'s schema: ${why}`, {
              rule_id: 'mcp.schema',
            });
          }
        }
        // The dispatcher answers Timeout at the deadline; the SDK's own timer, CANCEL_AFTER_MS later,
        // sends the server notifications/cancelled. No AbortSignal: its cost was a fifth of the
        // runtime's share of a call (bench mcp), and the SDK keeps a timer per request anyway.
        const left = Math.max(deadline - performance.now(), 0);
        let result: unknown;
        try {
          result = await connection.call(tool, args, left + CANCEL_AFTER_MS);
        } catch (error) {
          throw timedOut(error, name, ctx.timeoutMs) ?? error;
        }
        return resultValue(result as Parameters<typeof resultValue>[0]);
      },
    };
    return { definition, validate };
  }
}
