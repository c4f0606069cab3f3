/** The `organism` command as a user runs it: a real process, real files. */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import greeter from '../../listeners/greeter.ts';
import { decodePayload } from '../../src/xml/codec.ts';
import { DEFAULT_XML_LIMITS } from '../../src/xml/limits.ts';
import { parsePayload } from '../../src/xml/parse.ts';
import { compileValidator } from '../../src/xml/validate.ts';
import { REPO_ROOT, runCli } from '../helpers/daemon.ts';
import { AUTH_YAML, chainYaml, OPERATOR_TOKEN, organismDir, startOn, TOKENS_ENV } from '../server/helpers.ts';

describe('organism validate', () => {
  it('accepts the default organism.yaml', async () => {
    const { code, stdout } = await runCli(['validate']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ok: .*organism\.yaml \(\d+ listeners\)/);
  });

  it('prints file:line:column for each problem in a broken file and exits 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'organism-cli-'));
    const file = join(dir, 'organism.yaml');
    await writeFile(
      file,
      [
        'organism:',
        '  name: broken',
        'listeners:',
        '  - name: greeter',
        '    description: Greets.',
        `    handler: ${join(REPO_ROOT, 'listeners/greeter.ts')}`,
        '    peer: [shouter]',
        '',
      ].join('\n'),
    );
    const { code, stderr, stdout } = await runCli(['validate', file]);
    expect(code).toBe(1);
    const output = stdout + stderr;
    expect(output).toContain(`${file}:7:5`);
    expect(output).toMatch(/did you mean 'peers'/);
  });
});

describe('organism describe', () => {
  it('prints the XSD, an example and the prompt fragment', async () => {
    const { code, stdout } = await runCli(['describe', 'greeter']);
    expect(code).toBe(0);
    expect(stdout).toContain('<xs:element name="greeting"');
    expect(stdout).toContain('## Example');
    expect(stdout).toContain('Greets someone by name');
  });

  it('prints only an example that the daemon would accept, with --example', async () => {
    const { code, stdout } = await runCli(['describe', 'greeter', '--example']);
    expect(code).toBe(0);
    const parsed = parsePayload(stdout.trim(), DEFAULT_XML_LIMITS);
    expect(parsed.tag).toBe('greeting');
    const payload = decodePayload(parsed.node, greeter.payload.schema);
    expect(compileValidator('greeting', greeter.payload.schema)(payload)).toBeNull();
  });

  it('describes an agent by the task payload the runtime gives it', async () => {
    const { code, stdout } = await runCli(['describe', 'assistant', '--example']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/<assistant>\s*<task>[^<]+<\/task>\s*<\/assistant>/);
  });

  it('names the listeners when asked for one that does not exist', async () => {
    const { code, stderr } = await runCli(['describe', 'nobody']);
    expect(code).toBe(1);
    expect(stderr).toContain('greeter');
  });
});

describe('organism (no command)', () => {
  it('lists the commands and exits 1; --help exits 0', async () => {
    const bare = await runCli([]);
    expect(bare.code).toBe(1);
    expect(bare.stdout).toContain('validate');
    expect((await runCli(['--help'])).code).toBe(0);
    const unknown = await runCli(['frobnicate']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
  });
});

describe('organism send against a daemon with auth', () => {
  it('sends the operator token from ORGANISM_TOKEN, and says what to set when it is missing', async () => {
    const { file } = await organismDir(
      `organism:\n  name: send-auth\n${AUTH_YAML}listeners:\n${chainYaml()}`,
    );
    const daemon = await startOn(file, TOKENS_ENV);
    try {
      const payload = '<greeting><name>Tok</name></greeting>';
      const ok = await runCli(['send', '--url', daemon.url, '--to', 'greeter', payload, '--wait'], {
        ORGANISM_TOKEN: OPERATOR_TOKEN,
      });
      expect(ok.stderr).toBe('');
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain('shouter -> printer [message] <print><text>HELLO, TOK!</text>');

      const refused = await runCli(['send', '--url', daemon.url, '--to', 'greeter', payload], {
        ORGANISM_TOKEN: '',
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('401');
      expect(refused.stderr).toContain('set ORGANISM_TOKEN to an operator token');
    } finally {
      await daemon.stop();
    }
  });
});

describe('user modules outside this package', () => {
  it('loads a TypeScript tool from a folder with no package.json (tsx compiles it as CommonJS there)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'organism-usertool-'));
    await mkdir(join(dir, 'tools'));
    await writeFile(
      join(dir, 'tools', 'shout.ts'),
      [
        'const shout = {',
        "  name: 'shout',",
        "  description: 'Returns the text in capitals.',",
        "  args: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },",
        '  readOnly: true,',
        "  capability: 'read',",
        "  source: 'external',",
        '  async run(args: { text: string }) { return { text: args.text.toUpperCase() }; },',
        '};',
        'export default shout;',
        '',
      ].join('\n'),
    );
    const config = join(dir, 'organism.yaml');
    await writeFile(
      config,
      'organism:\n  name: usertool\nlisteners:\n  - name: caller\n    description: Calls shout.\n    agent: true\n    tools: [shout]\n',
    );
    const { code, stdout, stderr } = await runCli([
      'tools',
      'call',
      'shout',
      '{"text": "hi"}',
      '--as',
      'caller',
      '--config',
      config,
      '--root',
      dir,
    ]);
    expect(stderr).not.toContain('does not load');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ status: 'ok', tool: 'shout', value: { text: 'HI' } });
  });

  it('loads a TypeScript listener from a folder with no package.json', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'organism-userlistener-'));
    await writeFile(
      join(dir, 'echo.ts'),
      [
        `import { defineListener } from '${join(REPO_ROOT, 'src/index.ts')}';`,
        'export default defineListener<{ text: string }>({',
        "  description: 'Echoes.',",
        "  payload: { tag: 'echo', schema: { type: 'object', properties: { text: { type: 'string' } } } },",
        '  handler: (payload: { text: string }) => undefined,',
        '});',
        '',
      ].join('\n'),
    );
    const config = join(dir, 'organism.yaml');
    await writeFile(
      config,
      'organism:\n  name: userlistener\nlisteners:\n  - name: echo\n    handler: ./echo.ts\n',
    );
    const validate = await runCli(['validate', config]);
    expect(validate.stderr).toBe('');
    expect(validate.code).toBe(0);
    const described = await runCli(['describe', 'echo', '--example', '--config', config]);
    expect(described.code).toBe(0);
    expect(described.stdout).toContain('<echo>');
  });
});
