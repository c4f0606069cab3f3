/**
 * Attack on the names models are offered for MCP tools (src/mcp/names.ts): two granted tools
 * whose function names would come out the same (`a._x` and `a_.x` both `a___x`; a native tool
 * named like a mapped one; two long names sharing their first 55 characters) must never be
 * offered as one name, where the model's call would reach whichever came first.
 */
import { describe, expect, it } from 'vitest';
import { agentFunctions } from '../../src/agent/definition.ts';
import type { ListenerConfig } from '../../src/config/types.ts';
import { modelToolName } from '../../src/mcp/names.ts';

const tool = (name: string) => ({
  name,
  description: `the tool ${name}`,
  args: { type: 'object' as const, properties: {} },
  source: 'external' as const,
});

function offer(tools: string[]) {
  return agentFunctions({ name: 'worker', tools, peers: [] } as unknown as ListenerConfig, {
    tools: (name) => tool(name) as never,
    peers: () => undefined,
  });
}

describe('function names for models', () => {
  it('names that map alike are refused at build, never offered as one', () => {
    expect(modelToolName('a._x')).toBe(modelToolName('a_.x'));
    expect(() => offer(['a._x', 'a_.x'])).toThrow(
      "a._x and a_.x would both be offered to the model as 'a___x'",
    );
    expect(() => offer(['fs.read_file', 'fs__read_file'])).toThrow(/fs\.read_file and fs__read_file/);
  });

  it('long names that share their first 55 characters stay apart', () => {
    const base = `srv.${'x'.repeat(70)}`;
    const names = [`${base}a`, `${base}b`, `${base}.c`];
    const mapped = names.map(modelToolName);
    expect(new Set(mapped).size).toBe(3);
    for (const m of mapped) expect(m).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    const offered = offer(names);
    expect(offered.map((f) => f.target)).toEqual(names);
  });

  it('every mapped name is one a provider accepts, whatever the server named its tool', () => {
    for (const name of ['s.a.b.c', 's.ünï', 's.</x>', `s.${'é'.repeat(128)}`, 's.-', 's..']) {
      expect(modelToolName(name)).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    }
  });
});
