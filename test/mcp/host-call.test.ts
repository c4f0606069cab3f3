/**
 * McpHost.call finds what it calls without building offered()'s whole list: it must route every
 * name as that list would (a listener's name wins over a granted tool's; a listener without
 * `mcp: true`, a tool not granted to the identity or granted but not registered is no tool).
 */
import { describe, expect, it } from 'vitest';
import { McpHost, type McpHostDeps } from '../../src/mcp/server/host.ts';

const INJECTED = new Error('injected into the bus');

function host(): { host: McpHost; dispatched: string[]; injected: string[] } {
  const dispatched: string[] = [];
  const injected: string[] = [];
  const definition = (name: string) => ({
    name,
    description: name,
    args: { type: 'object', properties: {} },
    readOnly: true,
    capability: 'read',
    source: 'native',
  });
  const registered = new Map(
    ['calculate', 'word_count', 'run_command'].map((n) => [n, { definition: definition(n) }]),
  );
  const listener = (name: string, mcp: boolean) => ({
    tag: name,
    config: { name, description: name, mcp, tools: [] as string[] },
    definition: undefined,
  });
  const deps = {
    bus: {
      inject: async ({ to }: { to: string }) => {
        injected.push(to);
        throw INJECTED;
      },
    },
    listeners: () => [listener('calculate', true), listener('hidden', false), listener('upper', true)],
    tools: () => ({
      registry: { get: (name: string) => registered.get(name) },
      dispatcher: {
        call: async ({ tool }: { tool: string }) => {
          dispatched.push(tool);
          return { status: 'ok', value: 'done' };
        },
      },
    }),
    config: () => ({
      limits: { max_xml_elements: 10_000 },
      mcp: { tools: ['calculate', 'word_count', 'ghost'] },
    }),
  } as unknown as McpHostDeps;
  return { host: new McpHost(deps), dispatched, injected };
}

describe('McpHost.call', () => {
  it('routes each name as offered() lists it', async () => {
    const { host: h, dispatched, injected } = host();
    expect(h.offered().map((t) => [t.name, t.kind])).toEqual([
      ['calculate', 'listener'],
      ['upper', 'listener'],
      ['word_count', 'tool'],
    ]);
    // A listener's name wins over the granted tool of the same name.
    await expect(h.call('calculate', {})).rejects.toBe(INJECTED);
    await expect(h.call('upper', {})).rejects.toBe(INJECTED);
    expect(await h.call('word_count', {})).toMatchObject({ isError: false, text: 'done' });
    expect(injected).toEqual(['calculate', 'upper']);
    expect(dispatched).toEqual(['word_count']);
  });

  it.each([
    ['hidden', 'a listener without mcp: true'],
    ['ghost', 'granted to the identity, registered nowhere'],
    ['run_command', 'registered, not granted'],
    ['nothing', 'unknown'],
  ])('%s (%s) is no tool', async (name) => {
    const { host: h, dispatched, injected } = host();
    expect(await h.call(name, {})).toEqual({
      isError: true,
      text: `no tool named ${name}`,
      structured: { error: 'not_found' },
    });
    expect(h.offered().some((t) => t.name === name)).toBe(false);
    expect([...dispatched, ...injected]).toEqual([]);
  });
});
