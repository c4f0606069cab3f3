import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { ConfigError, formatConfigIssue } from '../../src/errors.ts';
import { fixture, issueAt, issuesOf } from './helpers.ts';

describe('organism.yaml errors name file:line:column, the key path and what was expected', () => {
  it('unknown keys, with did-you-mean where a key is close', async () => {
    const file = fixture('unknown-key.yaml');
    const issues = await issuesOf(file);
    expect(issues).toHaveLength(3);
    expect(issueAt(issues, 'organism.log_levl')).toEqual({
      file,
      line: 3,
      column: 3,
      path: 'organism.log_levl',
      message: "unknown key 'log_levl' — did you mean 'log_level'?",
    });
    expect(issueAt(issues, 'listeners[0].peer')).toMatchObject({
      line: 7,
      column: 5,
      message: "unknown key 'peer' — did you mean 'peers'?",
    });
    const colour = issueAt(issues, 'listeners[0].colour');
    expect(colour.line).toBe(8);
    expect(colour.message).toMatch(/^unknown key 'colour'; allowed here: name, description, handler, /);
    expect(formatConfigIssue(issues[0]!)).toBe(
      `${file}:3:3: organism.log_levl: unknown key 'log_levl' — did you mean 'log_level'?`,
    );
  });

  it('bad enum, wrong type and bad name say what was expected and what was found', async () => {
    const issues = await issuesOf(fixture('bad-values.yaml'));
    expect(issueAt(issues, 'listeners[0].trust')).toMatchObject({
      line: 8,
      column: 12,
      message: "must be one of low, medium, high; got 'hgih' — did you mean 'high'?",
    });
    expect(issueAt(issues, 'server.port')).toMatchObject({
      line: 4,
      message: "must be an integer; got 'seventy'",
    });
    expect(issueAt(issues, 'listeners[1].name')).toMatchObject({
      line: 9,
      message: "must be lowercase letters, digits, _ and -, starting with a letter; got 'Bad Name'",
    });
    expect(issues).toHaveLength(3);
  });

  it('duplicate listener names point at the second and name the first', async () => {
    const issues = await issuesOf(fixture('duplicates.yaml'));
    expect(issues).toEqual([
      {
        file: fixture('duplicates.yaml'),
        line: 6,
        column: 11,
        path: 'listeners[1].name',
        message: "duplicate listener name 'echo' (also listeners[0], line 4)",
      },
    ]);
  });

  it('a root tag shared without broadcast on every sharer is an error', async () => {
    const issues = await issuesOf(fixture('shared-tag.yaml'));
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ line: 8, path: 'listeners[1].handler' });
    expect(issues[0]!.message).toBe(
      "root tag <echo> is shared by 'first', 'second'; give each its own tag, or set broadcast: true on every one (missing on 'second')",
    );
  });

  it('a root tag shared by listeners that all say broadcast: true is fine', async () => {
    const { listeners } = await loadConfig(fixture('broadcast.yaml'), { env: {} });
    expect(listeners.map((l) => l.tag)).toEqual(['echo', 'echo']);
  });

  it("an agent's tag is its own even when everyone broadcasts", async () => {
    const issues = await issuesOf(fixture('agent-tag.yaml'));
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({
      line: 7,
      path: 'listeners[1].name',
      message: "root tag <echo> is shared by 'first', 'echo'; an agent's tag must be its own",
    });
  });

  it('peers naming no listener', async () => {
    const issues = await issuesOf(fixture('peers.yaml'));
    expect(issues).toEqual([
      expect.objectContaining({
        line: 6,
        column: 19,
        path: 'listeners[0].peers[1]',
        message: "peer 'ecoh' names no listener — did you mean 'echo'?",
      }),
      expect.objectContaining({
        line: 6,
        column: 25,
        path: 'listeners[0].peers[2]',
        message: "peer 'nobody-at-all' names no listener",
      }),
    ]);
  });

  it('a description missing from both the file and the module', async () => {
    const issues = await issuesOf(fixture('no-description.yaml'));
    expect(issues.map((i) => [i.line, i.path])).toEqual([
      [4, 'listeners[0]'],
      [10, 'listeners[2]'],
    ]);
    expect(issues[0]!.message).toBe(
      "listener 'quiet' has no description: add 'description' here or in its module's defineListener({ description })",
    );
    expect(issues[1]!.message).toBe("listener 'thinker' has no description: add 'description' here");
  });

  it('a listener that is not an agent needs a handler', async () => {
    const issues = await issuesOf(fixture('no-handler.yaml'));
    expect(issues).toEqual([
      expect.objectContaining({
        line: 6,
        path: 'listeners[1]',
        message:
          "listener 'lost' has no handler: give a module path in 'handler' (only agents, agent: true, run without one)",
      }),
    ]);
  });

  it("handler modules that do not load, each with the module's own error", async () => {
    const issues = await issuesOf(fixture('bad-modules.yaml'));
    expect(issues.map((i) => [i.line, i.column, i.path])).toEqual([
      [5, 14, 'listeners[0].handler'],
      [7, 14, 'listeners[1].handler'],
      [9, 14, 'listeners[2].handler'],
    ]);
    expect(issues[0]!.message).toBe(
      "handler module './listeners/throws.ts' does not load: import failed: fixture refuses to load: ORGANISM_FIXTURE_NEVER_SET is not set",
    );
    expect(issues[1]!.message).toBe("handler module './listeners/missing.ts' does not load: file not found");
    expect(issues[2]!.message).toMatch(/not-a-listener\.ts' does not load: .*not made by defineListener/);
  });

  it('a YAML syntax error has its line and column (fixture is .txt so the linter leaves it alone)', async () => {
    const issues = await issuesOf(fixture('syntax-error.txt'));
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ file: fixture('syntax-error.txt'), line: 7, column: 3, path: '' });
    expect(issues[0]!.message).toMatch(/^YAML syntax error: Flow sequence .* end with a \]/);
  });

  it('a missing file is one clear issue', async () => {
    const issues = await issuesOf(fixture('does-not-exist.yaml'));
    expect(issues).toEqual([
      { file: fixture('does-not-exist.yaml'), path: '', message: 'cannot read config file: no such file' },
    ]);
  });

  describe('in generated files', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'organism-config-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    async function write(name: string, text: string): Promise<string> {
      const path = join(dir, name);
      await writeFile(path, text);
      return path;
    }

    it('collects issues of every kind from one file, sorted by line', async () => {
      const file = await write(
        'many.yaml',
        [
          'organism:',
          '  name: many',
          'bus:',
          '  transport: redis',
          'listeners:',
          '  - name: a',
          '    description: A.',
          '    agent: true',
          '    peers: [b]',
          '    tool_config:',
          '      calculate: { rate_limit: { per_minute: 0 } }',
          '  - name: a',
          '    description: Another A.',
          '    agent: true',
        ].join('\n'),
      );
      const issues = await issuesOf(file);
      expect(issues.map((i) => `${i.line}: ${i.path}: ${i.message}`)).toEqual([
        "3: bus: missing required key 'url' (needed when transport is redis)",
        "9: listeners[0].peers[0]: peer 'b' names no listener",
        "11: listeners[0].tool_config.calculate: tool_config for 'calculate', which is not in this listener's tools",
        '11: listeners[0].tool_config.calculate.rate_limit.per_minute: must be >= 1; got the number 0',
        "12: listeners[1].name: duplicate listener name 'a' (also listeners[0], line 6)",
        "12: listeners[1].name: root tag <a> is shared by 'a', 'a'; an agent's tag must be its own",
      ]);
    });

    it('requires organism.name and at least one listener', async () => {
      const file = await write('empty-listeners.yaml', 'organism: {}\nlisteners: []\n');
      const issues = await issuesOf(file);
      expect(issues.map((i) => `${i.line}:${i.column}: ${i.path}: ${i.message}`)).toEqual([
        "1:1: organism: missing required key 'name'",
        '2:12: listeners: must list at least 1 item; got an empty list',
      ]);
      const blank = await write('blank.yaml', '# nothing\n');
      expect((await issuesOf(blank))[0]!.message).toBe(
        'expected a mapping with at least `organism:` and `listeners:`',
      );
    });

    it('never echoes a value given where an environment variable name belongs', async () => {
      const file = await write(
        'secret.yaml',
        [
          'organism: { name: secret }',
          'listeners: [{ name: a, agent: true, description: A. }]',
          'llm:',
          '  backends:',
          '    - provider: anthropic',
          '      api_key_env: sk-ant-api03-very-secret',
        ].join('\n'),
      );
      const error = await loadConfig(file, { env: {} }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      const text = (error as ConfigError).message;
      expect(text).toContain(
        ':6:20: llm.backends[0].api_key_env: must be the name of an environment variable',
      );
      expect(text).not.toContain('sk-ant');
    });

    it('says which provider needs which key', async () => {
      const file = await write(
        'llm.yaml',
        [
          'organism: { name: llm }',
          'listeners: [{ name: a, agent: true, description: A. }]',
          'llm:',
          '  backends:',
          '    - provider: openai',
          '    - provider: openai-compatible',
        ].join('\n'),
      );
      const issues = await issuesOf(file);
      expect(issues.map((i) => `${i.line}: ${i.path}: ${i.message}`)).toEqual([
        "5: llm.backends[0]: missing required key 'api_key_env' (needed when provider is anthropic or openai)",
        "6: llm.backends[1]: missing required key 'base_url' (needed when provider is ollama or openai-compatible)",
      ]);
    });

    it('a handler module with a syntax error reports the parser message', async () => {
      await write('broken.mjs', 'export default {{ not javascript\n');
      const file = await write(
        'syntax-module.yaml',
        'organism: { name: s }\nlisteners:\n  - name: broken\n    handler: ./broken.mjs\n',
      );
      const issues = await issuesOf(file);
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatchObject({ line: 4, path: 'listeners[0].handler' });
      expect(issues[0]!.message).toMatch(
        /^handler module '\.\/broken\.mjs' does not load: import failed: .+/,
      );
    });
  });
});
