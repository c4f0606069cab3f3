/**
 * createAgentDefinition given the organism-wide `llm:` section (as embedders call it) builds the
 * agent's client from its own `llm:` over that section, as the daemon does.
 */
import { describe, expect, it } from 'vitest';
import { createAgentDefinition } from '../../src/agent/definition.ts';
import type { AgentLogger } from '../../src/agent/types.ts';
import type { LlmSection } from '../../src/config/types.ts';
import { testConfig } from '../../src/testing/index.ts';

const SECTION: LlmSection = {
  strategy: 'failover',
  retries: 0,
  backends: [{ name: 'demo', provider: 'scripted' }],
};

function logged(): { logger: AgentLogger; lines: string[] } {
  const lines: string[] = [];
  const keep = (_: object, msg: string) => void lines.push(msg);
  return { logger: { info: keep, warn: keep, debug: keep }, lines };
}

describe('createAgentDefinition with an llm: section', () => {
  it("uses the agent's own llm: settings over the section", () => {
    const [config] = testConfig({
      listeners: [
        { name: 'helper', description: 'Helps.', agent: true, llm: { backend: 'demo', model: 'own-model' } },
      ],
    }).listeners;
    const { logger, lines } = logged();
    createAgentDefinition(config!, { llm: SECTION, tools: () => undefined, peers: () => undefined, logger });
    expect(lines).toContain('agent helper uses scripted/own-model (the scripted stand-in, not a real model)');
  });

  it('uses the section as it is for an agent without llm: of its own', () => {
    const [config] = testConfig({
      listeners: [{ name: 'helper', description: 'Helps.', agent: true }],
    }).listeners;
    const { logger, lines } = logged();
    createAgentDefinition(config!, { llm: SECTION, tools: () => undefined, peers: () => undefined, logger });
    expect(lines).toContain('agents use scripted/builtin (the scripted stand-in, not a real model)');
  });
});
