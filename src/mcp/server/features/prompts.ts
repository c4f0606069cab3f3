/**
 * prompts/list and prompts/get: each agent listener offered over MCP (`mcp: true`) as a prompt
 * (its role text and a task built from the arguments, which are its payload's fields), then the
 * project's own prompts (definePrompt in prompt_modules). Arguments are checked before anything
 * runs: a missing required one or an unknown one is an InvalidParams error naming it.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { GetPromptRequestSchema, ListPromptsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { redactKnown } from '../../../audit/redact.ts';
import type { LoadedListener } from '../../../config/load.ts';
import { checkBlock } from '../../../tools/content.ts';
import { encodePayload } from '../../../xml/codec.ts';
import { redactBlock } from './content.ts';
import type { PromptArgument, PromptDefinition, PromptMessage } from './define.ts';
import {
  checkAnswerSize,
  type FeatureDeps,
  features,
  invalidParams,
  projectError,
  runProjectCode,
} from './deps.ts';

interface OfferedPrompt {
  name: string;
  title?: string;
  description: string;
  arguments: PromptArgument[];
  get(args: Record<string, string>): Promise<PromptMessage[]>;
}

type Schema = {
  properties?: Record<string, { description?: string; enum?: unknown[] }>;
  required?: string[];
};

/** The agents offered over MCP, as prompts. */
export function agentPrompts(deps: FeatureDeps): OfferedPrompt[] {
  const { listeners, config } = deps.host.deps;
  return listeners()
    .filter((l) => l.config.agent && l.config.mcp)
    .map((listener) => agentPrompt(listener, config().limits.max_xml_elements));
}

function agentPrompt(listener: LoadedListener, maxElements: number): OfferedPrompt {
  const { name, description } = listener.config;
  const schema = listener.definition?.payload?.schema as Schema | undefined;
  const required = new Set(schema?.required ?? []);
  const args: PromptArgument[] = Object.entries(schema?.properties ?? {}).map(([arg, p]) => ({
    name: arg,
    ...(p.description ? { description: p.description } : {}),
    required: required.has(arg),
    // Suggestions from the schema's own list of values, when it has one.
    ...(Array.isArray(p.enum) ? { complete: () => (p.enum as unknown[]).map(String) } : {}),
  }));
  const fallback = `You are ${name}${description ? `: ${description}` : ''}`;
  const role = listener.config.prompt?.trim() || fallback;
  return {
    name,
    title: `Organism agent ${name}`,
    description: `${description} (The agent's role and a task for it, as the organism would give it.)`,
    arguments: args,
    async get(given) {
      let task: string;
      try {
        task = encodePayload(listener.tag, given, listener.definition?.payload?.schema, maxElements);
      } catch (error) {
        throw invalidParams(`arguments for prompt ${name}: ${(error as Error).message}`);
      }
      return [{ role: 'user', content: { type: 'text', text: `${role}\n\nTask:\n${task}` } }];
    },
  };
}

function projectPrompt(p: PromptDefinition): OfferedPrompt {
  return {
    name: p.name,
    ...(p.title ? { title: p.title } : {}),
    description: p.description,
    arguments: [...(p.arguments ?? [])],
    async get(args) {
      const got = await runProjectCode(`prompt ${p.name}`, () => p.get(args));
      const messages = checkMessages(p.name, got);
      checkAnswerSize(`prompt ${p.name}`, messages);
      return messages;
    },
  };
}

function checkMessages(name: string, got: unknown): PromptMessage[] {
  if (typeof got === 'string') return [{ role: 'user', content: { type: 'text', text: got } }];
  const wrong = (why: string) => projectError(`prompt ${name} returned ${why}`);
  if (!Array.isArray(got)) throw wrong('neither a string nor an array of messages');
  got.forEach((m, i) => {
    if (typeof m !== 'object' || m === null) throw wrong(`messages[${i}], which is not an object`);
    const { role, content } = m as PromptMessage;
    if (role !== 'user' && role !== 'assistant')
      throw wrong(`messages[${i}].role ${JSON.stringify(role)}; user or assistant`);
    const bad = checkBlock(content, `messages[${i}].content`);
    if (bad) throw wrong(`a message that is not well formed: ${bad}`);
  });
  return got as PromptMessage[];
}

/** Every prompt offered: the agents', then the project's (an agent's name wins). */
export async function offeredPrompts(deps: FeatureDeps): Promise<OfferedPrompt[]> {
  const out = agentPrompts(deps);
  const taken = new Set(out.map((p) => p.name));
  for (const { definition } of (await features(deps)).prompts.values())
    if (!taken.has(definition.name)) out.push(projectPrompt(definition));
  return out;
}

/** The arguments as the prompt takes them, or an InvalidParams error naming what is wrong. */
export function checkArguments(
  prompt: OfferedPrompt,
  given: Record<string, unknown>,
): Record<string, string> {
  const known = new Set(prompt.arguments.map((a) => a.name));
  for (const key of Object.keys(given)) {
    if (!known.has(key))
      throw invalidParams(
        `prompt ${prompt.name} has no argument ${key}${known.size ? ` (it takes ${[...known].join(', ')})` : ' (it takes none)'}`,
        { argument: key },
      );
    if (typeof given[key] !== 'string')
      throw invalidParams(`prompt ${prompt.name}: argument ${key} must be a string`);
  }
  const missing = prompt.arguments
    .filter((a) => a.required && given[a.name] === undefined)
    .map((a) => a.name);
  if (missing.length > 0)
    throw invalidParams(
      `prompt ${prompt.name} needs the argument${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
      {
        missing,
      },
    );
  return given as Record<string, string>;
}

export function registerPrompts(server: Server, deps: FeatureDeps): void {
  server.registerCapabilities({ prompts: {} });
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: (await offeredPrompts(deps)).map((p) => ({
      name: p.name,
      ...(p.title ? { title: p.title } : {}),
      description: p.description,
      arguments: p.arguments.map((a) => ({
        name: a.name,
        ...(a.description ? { description: a.description } : {}),
        required: a.required === true,
      })),
    })),
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    const { name } = request.params;
    const prompt = (await offeredPrompts(deps)).find((p) => p.name === name);
    if (!prompt) throw invalidParams(`no prompt named ${name}`, { name });
    const args = checkArguments(prompt, request.params.arguments ?? {});
    const messages = await prompt.get(args);
    return {
      description: redactKnown(prompt.description),
      messages: messages.map((m) => ({ role: m.role, content: redactBlock(m.content) })),
    };
  });
}
