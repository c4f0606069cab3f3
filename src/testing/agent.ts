/**
 * testAgent(): an LLM agent listener on the same in-process bus as testListener(), its model
 * played by the scripted provider (or any Provider the test gives), so an agent's prompt, tools
 * and peers are tested without a network or an API key.
 */
import { LlmClient } from '../agent/client.ts';
import { createAgentDefinition, type PeerInfo } from '../agent/definition.ts';
import { createScriptedProvider, type Script } from '../agent/providers/scripted.ts';
import type { CompletionRequest, Provider } from '../agent/types.ts';
import { startHarness, type TestedListener, type TestListenerOptions } from './listener.ts';

export interface TestAgentOptions extends Omit<TestListenerOptions, 'name'> {
  /** The agent's name; its payload tag is the same (`<name><task>...</task></name>`). */
  name: string;
  /** The model: a script for the scripted provider, or a Provider of the test's own. */
  model: Script | Provider;
  /** The agent's instructions (organism.yaml `prompt`). */
  prompt?: string;
  description?: string;
  /** Model turns per task (organism.yaml `max_turns`). Default: the schema's. */
  maxTurns?: number;
}

export interface TestedAgent extends TestedListener {
  /** Every request the model was sent, in order: the system prompt, the messages, the functions. */
  readonly requests: readonly CompletionRequest[];
  /** Sends `<name><task>task</task></name>` and resolves with the replies (its `<answer>`). */
  ask(task: string, options?: { thread?: string }): ReturnType<TestedListener['send']>;
}

/** Runs one agent with its model scripted; `ask()` gives it a task. */
export async function testAgent(options: TestAgentOptions): Promise<TestedAgent> {
  const requests: CompletionRequest[] = [];
  const provider = recording(
    isProvider(options.model) ? options.model : createScriptedProvider({ script: options.model }),
    requests,
  );
  const tested = await startHarness(
    {
      name: options.name,
      agent: true,
      ...(options.description ? { description: options.description } : {}),
      ...(options.prompt ? { prompt: options.prompt } : {}),
      ...(options.maxTurns ? { max_turns: options.maxTurns } : {}),
    },
    ({ entry, registry, peers, history }) => {
      const peerInfo = (name: string): PeerInfo | undefined => {
        const d = peers.get(name);
        if (!d) return undefined;
        return {
          description: d.description ?? name,
          schema: d.payload.schema,
          replies: d.response !== undefined,
        };
      };
      return createAgentDefinition(
        { ...entry, description: entry.description ?? `${entry.name}, an agent under test.` },
        {
          llm: new LlmClient([{ provider }], { strategy: 'failover', retries: 0 }),
          tools: (name) => registry.get(name)?.definition,
          peers: peerInfo,
          history,
        },
      );
    },
    options,
  );
  return Object.assign(tested, {
    requests,
    ask: (task: string, askOptions: { thread?: string } = {}) => tested.send({ task }, askOptions),
  });
}

function isProvider(model: Script | Provider): model is Provider {
  return typeof (model as Provider).complete === 'function';
}

/** The provider, keeping a copy of each request it is sent. */
function recording(provider: Provider, requests: CompletionRequest[]): Provider {
  return {
    kind: provider.kind,
    model: provider.model,
    label: provider.label,
    complete(request, signal) {
      requests.push(structuredClone(request));
      return provider.complete(request, signal);
    },
  };
}
