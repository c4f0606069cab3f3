/**
 * A reload reports as `replaced` only the listeners that changed. An agent's definition is built
 * anew by every reload, so it is compared by what it offers the model, not by identity.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LlmClient } from '../../src/agent/client.ts';
import { createAgentDefinition } from '../../src/agent/definition.ts';
import { createScriptedProvider } from '../../src/agent/providers/scripted.ts';
import type { Bus } from '../../src/bus/bus.ts';
import type { ListenerSpec } from '../../src/bus/listeners.ts';
import type { ListenerConfig, LlmSection } from '../../src/config/types.ts';
import { defineListener } from '../../src/listener/types.ts';
import { testConfig } from '../../src/testing/index.ts';
import { listenerSpec, startBus, type TestListener, textPayload } from '../helpers/bus.ts';

const echo = defineListener<{ text: string }>({
  description: 'echoes',
  payload: textPayload('echo'),
  handler: (p, ctx) => ctx.respond(`<echoed><text>${p.text}</text></echoed>`),
});

/** The agent's organism.yaml entry, the schema's defaults applied. */
function agentConfig(overrides: Partial<ListenerConfig> = {}): ListenerConfig {
  const [config] = testConfig({
    listeners: [
      {
        name: 'assistant',
        description: 'Answers questions.',
        agent: true,
        peers: ['echo'],
        tools: ['calculate'],
        max_turns: 5,
        ...overrides,
      },
    ],
  }).listeners;
  return config!;
}

/** The agent as a reload builds it: a new definition (and LLM client) from its config each time. */
function agent(overrides: Partial<ListenerConfig> = {}): TestListener {
  const config = agentConfig(overrides);
  const definition = createAgentDefinition(config, {
    llm: new LlmClient([{ provider: createScriptedProvider({ script: { scripts: [] } }) }], {
      strategy: 'failover',
      retries: 0,
    }),
    tools: (name) =>
      name === 'calculate' ? { description: 'Does arithmetic.', args: { type: 'object' } } : undefined,
    peers: () => ({ description: 'echoes', schema: textPayload('echo').schema, replies: true }),
  });
  return { name: 'assistant', definition, peers: config.peers, config };
}

const code = (definition = echo): TestListener => ({ name: 'echo', definition });

const specs = (...listeners: TestListener[]): ListenerSpec[] => listeners.map(listenerSpec);

let bus: Bus | undefined;
afterEach(async () => {
  await bus?.stop(100);
  bus = undefined;
});

describe('reload reports', () => {
  it('nothing replaced when nothing changed, agents included', () => {
    bus = startBus([agent(), code()]);
    const again = bus.reconfigure(specs(agent(), code()));
    expect(again).toEqual({ added: [], removed: [], replaced: [], unchanged: ['assistant', 'echo'] });
  });

  it('an agent replaced when its config or what it is offered changes', () => {
    bus = startBus([agent(), code()]);
    expect(bus.reconfigure(specs(agent({ prompt: 'Be brief.' }), code())).replaced).toEqual(['assistant']);
    expect(bus.reconfigure(specs(agent({ prompt: 'Be brief.' }), code())).replaced).toEqual([]);
    // Same config, but a peer's description changed: the agent's prompt is not the same any more.
    const changedPeer = agent({ prompt: 'Be brief.' });
    const other = createAgentDefinition(agentConfig({ prompt: 'Be brief.' }), {
      llm: new LlmClient([{ provider: createScriptedProvider({ script: { scripts: [] } }) }], {
        strategy: 'failover',
        retries: 0,
      }),
      tools: () => undefined,
      peers: () => ({ description: 'shouts', schema: textPayload('echo').schema, replies: true }),
    });
    expect(bus.reconfigure(specs({ ...changedPeer, definition: other }, code())).replaced).toEqual([
      'assistant',
    ]);
  });

  it('an agent replaced when only the llm: section changed (the model it asks is another)', () => {
    const built = (llm: LlmSection) => {
      const config = agentConfig();
      const definition = createAgentDefinition(config, {
        llm: LlmClient.fromConfig(llm, { env: {} }),
        tools: () => undefined,
        peers: () => ({ description: 'echoes', schema: textPayload('echo').schema, replies: true }),
      });
      return { name: 'assistant', definition, peers: config.peers, config };
    };
    const before: LlmSection = { strategy: 'failover', retries: 1, backends: [] };
    bus = startBus([built(before), code()]);
    expect(bus.reconfigure(specs(built(before), code())).replaced).toEqual([]);
    expect(bus.reconfigure(specs(built({ ...before, retries: 3 }), code())).replaced).toEqual(['assistant']);
  });

  it('a code listener replaced when its module export is a new one, unchanged when it is the same', () => {
    bus = startBus([agent(), code()]);
    expect(bus.reconfigure(specs(agent(), code(echo))).replaced).toEqual([]);
    const edited = defineListener<{ text: string }>({ ...echo });
    expect(bus.reconfigure(specs(agent(), code(edited))).replaced).toEqual(['echo']);
  });
});
