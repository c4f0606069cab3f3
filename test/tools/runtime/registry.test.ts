/** Registration checks, discovery of tool modules, and tool_config validation at construction. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, ToolRegistrationError } from '../../../src/errors.ts';
import { loadNativeTools, loadToolCatalog } from '../../../src/tools/catalog.ts';
import { ToolRegistry } from '../../../src/tools/registry.ts';
import type { ToolDefinition } from '../../../src/tools/types.ts';
import { EMPTY_ARGS, echoTool, makeDispatcher, noopTool, tempDir } from './helpers.ts';

function registerError(definition: Partial<ToolDefinition>): string {
  const registry = new ToolRegistry();
  try {
    registry.register({ ...noopTool(), ...definition } as ToolDefinition);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolRegistrationError);
    return (error as Error).message;
  }
  throw new Error('registration did not fail');
}

describe('registry', () => {
  it('keeps registration order and refuses a duplicate name', () => {
    const registry = new ToolRegistry();
    registry.register(echoTool());
    registry.register(noopTool('zeta'));
    registry.register(noopTool('alpha'));
    expect(registry.names()).toEqual(['echo', 'zeta', 'alpha']);
    expect(() => registry.register(noopTool('zeta'))).toThrow(
      'tool zeta: is registered twice; tool names must be unique',
    );
  });

  it('checks each declaration at registration, naming the tool and the problem', () => {
    expect(registerError({ name: 'Bad-Name' })).toContain('tool Bad-Name: name must be snake_case');
    expect(registerError({ description: 'short' })).toContain(
      'needs a description of at least 10 characters',
    );
    expect(registerError({ capability: 'root' as never })).toContain(
      'capability "root" is not one of read, write',
    );
    expect(registerError({ source: 'plugin' as never })).toContain("source must be 'native' or 'external'");
    expect(registerError({ guard: 'dns' as never })).toContain('guard "dns" is not one of');
    expect(registerError({ args: { type: 'string' } })).toContain('args schema must describe an object');
    expect(registerError({ args: { type: 'object', properties: { a: { type: 'strnig' } } } })).toContain(
      'args schema does not compile',
    );
    expect(registerError({ args: { type: 'object', requried: ['a'] } })).toContain(
      'args schema does not compile',
    );
    expect(registerError({ run: 'nope' as never })).toContain('run must be a function');
  });
});

describe('catalog', () => {
  it('discovers tools/*.ts and librarian/tools/*.ts sorted by file name; arrays allowed', async () => {
    const root = await tempDir();
    await mkdir(join(root, 'tools', 'lib'), { recursive: true });
    await mkdir(join(root, 'librarian', 'tools'), { recursive: true });
    const tool = (name: string) =>
      `{ name: '${name}', description: 'Test tool ${name} for discovery.', args: ${JSON.stringify(EMPTY_ARGS)}, readOnly: true, capability: 'read', source: 'native', run: async () => '${name}' }`;
    await writeFile(join(root, 'tools', 'b-second.ts'), `export default ${tool('second')};\n`);
    await writeFile(
      join(root, 'tools', 'a-first.ts'),
      `export default [${tool('first_a')}, ${tool('first_b')}];\n`,
    );
    await writeFile(join(root, 'tools', 'lib', 'helper.ts'), 'export const x = 1;\n');
    await writeFile(
      join(root, 'librarian', 'tools', 'query.ts'),
      `export default ${tool('librarian_query')};\n`,
    );
    const entries = await loadToolCatalog(root);
    expect(entries.map((e) => [e.definition.name, e.module.slice(root.length)])).toEqual([
      ['first_a', '/tools/a-first.ts'],
      ['first_b', '/tools/a-first.ts'],
      ['second', '/tools/b-second.ts'],
      ['librarian_query', '/librarian/tools/query.ts'],
    ]);
    expect((await loadNativeTools(root)).map((t) => t.name)).toEqual([
      'first_a',
      'first_b',
      'second',
      'librarian_query',
    ]);
  });

  it('names a module that exports no tool', async () => {
    const root = await tempDir();
    await mkdir(join(root, 'tools'));
    await writeFile(join(root, 'tools', 'empty.ts'), 'export const nothing = 1;\n');
    await expect(loadToolCatalog(root)).rejects.toThrow(/empty\.ts: has no default export/);
  });

  it('a root without tool folders has no tools', async () => {
    expect(await loadNativeTools(await tempDir())).toEqual([]);
  });
});

describe('grants and tool_config are checked when the dispatcher is built', () => {
  function configError(listeners: Parameters<typeof makeDispatcher>[1]): ConfigError {
    try {
      makeDispatcher([echoTool(), noopTool()], listeners);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return error as ConfigError;
    }
    throw new Error('no ConfigError');
  }

  it('a grant naming an unknown tool', () => {
    const error = configError([
      { name: 'a', tools: ['noop'] },
      { name: 'b', tools: ['noop', 'ecoh'] },
    ]);
    expect(error.issues.map((i) => [i.path, i.message])).toEqual([
      ['listeners[1].tools[1]', 'unknown tool "ecoh" (did you mean echo?); known tools: echo, noop'],
    ]);
  });

  it('unknown and mistyped tool_config keys, with the full key path', () => {
    const error = configError([
      {
        name: 'a',
        tools: ['echo'],
        tool_config: {
          echo: {
            allowed_path: ['/x'],
            timeout_ms: 'soon',
            rate_limit: { per_minute: 0 },
            max_result_bytes: 10,
          } as never,
        },
      },
    ]);
    const byPath = Object.fromEntries(error.issues.map((i) => [i.path, i.message]));
    expect(byPath['listeners[0].tool_config.echo.allowed_path']).toMatch(
      /is not a known key \(did you mean allowed_paths\?\); echo takes: allowed_paths, rate_limit, timeout_ms, max_result_bytes/,
    );
    expect(byPath['listeners[0].tool_config.echo.timeout_ms']).toBe('must be integer (got string)');
    expect(byPath['listeners[0].tool_config.echo.rate_limit.per_minute']).toBe('must be > 0');
    expect(byPath['listeners[0].tool_config.echo.max_result_bytes']).toBe('must be >= 256');
  });

  it('tool_config for a tool the listener is not granted', () => {
    const error = configError([{ name: 'a', tools: ['noop'], tool_config: { echo: {}, nope: {} } }]);
    expect(error.issues.map((i) => i.path)).toEqual([
      'listeners[0].tool_config.echo',
      'listeners[0].tool_config.nope',
    ]);
    expect(error.issues[0]?.message).toContain('not granted');
  });

  it('a tool-specific key of the wrong type', () => {
    const error = configError([
      { name: 'a', tools: ['echo'], tool_config: { echo: { allowed_paths: [1] } } },
    ]);
    expect(error.issues.map((i) => [i.path, i.message])).toEqual([
      ['listeners[0].tool_config.echo.allowed_paths[0]', 'must be string (got integer)'],
    ]);
  });
});
