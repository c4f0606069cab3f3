/**
 * completion/complete: suggestions for a prompt's argument (the project's `complete` function, or
 * the values an agent's payload field allows) and for a resource template's variable (thread ids
 * by prefix, listener names, or the project's `complete` for its own templates). An unknown prompt
 * or template is InvalidParams; an argument nobody completes has no suggestions.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CompleteRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { redactKnown } from '../../../audit/redact.ts';
import type { Completer } from './define.ts';
import {
  type FeatureDeps,
  features,
  invalidParams,
  MAX_COMPLETIONS,
  projectError,
  runProjectCode,
} from './deps.ts';
import { offeredPrompts } from './prompts.ts';
import { LISTENER_TEMPLATE, offeredListeners, THREAD_TEMPLATE } from './resources.ts';

interface Ask {
  ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> };
}

async function completer(deps: FeatureDeps, ask: Ask): Promise<Completer | undefined> {
  const arg = ask.argument.name;
  if (ask.ref.type === 'ref/prompt') {
    const { name } = ask.ref;
    const prompt = (await offeredPrompts(deps)).find((p) => p.name === name);
    if (!prompt) throw invalidParams(`no prompt named ${name}`, { name });
    return prompt.arguments.find((a) => a.name === arg)?.complete;
  }
  const { uri } = ask.ref;
  if (uri === THREAD_TEMPLATE)
    return arg === 'id'
      ? (value) => deps.host.deps.bus.threadIdsStartingWith(value, MAX_COMPLETIONS + 1)
      : undefined;
  if (uri === LISTENER_TEMPLATE)
    return arg === 'name'
      ? (value) =>
          offeredListeners(deps)
            .map((l) => l.config.name)
            .filter((n) => n.startsWith(value))
      : undefined;
  const template = (await features(deps)).resources.find((r) => r.definition.uriTemplate === uri);
  if (!template) throw invalidParams(`no resource template ${uri}`, { uri });
  const d = template.definition;
  return d.uriTemplate !== undefined ? d.complete?.[arg] : undefined;
}

export function registerCompletion(server: Server, deps: FeatureDeps): void {
  server.registerCapabilities({ completions: {} });
  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const ask = request.params as Ask;
    const complete = await completer(deps, ask);
    if (!complete) return { completion: { values: [], hasMore: false } };
    const context = { arguments: { ...(ask.context?.arguments ?? {}) } };
    const got = await runProjectCode(`completion of ${ask.argument.name}`, () =>
      complete(ask.argument.value, context),
    );
    if (!Array.isArray(got) || got.some((v) => typeof v !== 'string'))
      throw projectError(
        `completion of ${ask.argument.name} returned something other than an array of strings`,
      );
    const values = (got as string[]).slice(0, MAX_COMPLETIONS).map((v) => redactKnown(v));
    return { completion: { values, total: got.length, hasMore: got.length > MAX_COMPLETIONS } };
  });
}
