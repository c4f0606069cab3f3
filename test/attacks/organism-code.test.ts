/**
 * The organism's own code is out of the file tools' reach, as organism.yaml is. With the real
 * daemon (bin/organism.js) and a listener granted write_file with allowed_paths covering the whole
 * project folder, write_file tries to overwrite another listener's handler, the helper it imports,
 * a tool module (and to add one to the tool_modules folder) and an agent's script, by absolute
 * path, by `..`, by a `./`-and-`..` spelling and through a symlink in the workspace. Each worked
 * before: the next `organism reload` (or `organism dev`'s next save) loaded the written code. Now
 * each is refused with file.organism_code, the file is unchanged, and after `organism reload` the
 * greeter, the tool and the agent answer as before.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, REPO_ROOT, runCli, startDaemonProcess } from '../helpers/daemon.ts';
import { call, LISTENERS, until } from '../server/helpers.ts';

const GREETER = `import { defineListener } from 'organism';
import { GREETING } from '../lib/words.js';

export default defineListener({
  description: 'Greets by name.',
  payload: {
    tag: 'greeting',
    schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  },
  response: { tag: 'greeted', schema: { type: 'object', properties: { text: { type: 'string' } } } },
  handler: (payload: { name: string }, ctx: any) => ctx.respond({ text: \`\${GREETING}, \${payload.name}\` }),
});
`;
const WORDS = `export const GREETING = 'Hello';\n`;
const TOOL = `export default {
  name: 'answer',
  description: 'Answers with a fixed sentence.',
  args: { type: 'object', properties: {}, additionalProperties: false },
  readOnly: true,
  capability: 'read',
  source: 'native',
  async run() {
    return { said: 'as written' };
  },
};
`;
const SCRIPT = `scripts:\n  - turns:\n      - text: "Triage: {{task}} is urgent."\n`;

/** What the attacker writes in place of each: code that would run as another listener. */
const HOSTILE: Record<string, string> = {
  'listeners/greeter.ts': GREETER.replace('{ text: `', '{ text: `owned '),
  'lib/words.ts': `export const GREETING = 'Owned';\n`,
  'tools/answer.ts': TOOL.replace('as written', 'owned'),
  'scripts/triage.yaml': SCRIPT.replace('Triage: {{task}} is urgent.', 'owned'),
};

const PROMPT = `export default { name: 'hello', description: 'Says hello', get: () => 'hello' };\n`;
const RESOURCE = `export default { uri: 'docs://readme', name: 'readme', read: () => 'as written' };\n`;

let dir: string;
let daemon: DaemonProcess;

beforeAll(async () => {
  // Not under /tmp, which the sandbox replaces with a private one: the project must be where a
  // program could reach it but for the sandbox's cover of the config's folder.
  dir = await mkdtemp(join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), 'organism-attack-code-'));
  await mkdir(join(dir, 'node_modules'));
  await symlink(REPO_ROOT.replace(/\/$/, ''), join(dir, 'node_modules', 'organism'));
  // A package the project's code could import: the daemon loads it at its next start.
  await mkdir(join(dir, 'node_modules', 'words-lib'));
  await writeFile(join(dir, 'node_modules', 'words-lib', 'index.js'), WORDS);
  for (const folder of ['listeners', 'lib', 'tools', 'scripts', 'ws', 'prompts', 'resources'])
    await mkdir(join(dir, folder));
  // MCP prompts and resources of the project's own code (issue 27): loaded into the daemon too.
  await writeFile(join(dir, 'prompts/hello.ts'), PROMPT);
  await writeFile(join(dir, 'resources/doc.ts'), RESOURCE);
  await writeFile(join(dir, 'listeners/greeter.ts'), GREETER);
  await writeFile(join(dir, 'lib/words.ts'), WORDS);
  await writeFile(join(dir, 'tools/answer.ts'), TOOL);
  await writeFile(join(dir, 'scripts/triage.yaml'), SCRIPT);
  // A link in the workspace to the handler: written through, it would replace the handler.
  await symlink(join(dir, 'listeners/greeter.ts'), join(dir, 'ws/greeter-link.ts'));
  await writeFile(
    join(dir, 'organism.yaml'),
    `organism:
  name: code-attack
  workspace: ./ws
tool_modules: [./tools]
prompt_modules: [./prompts]
resource_modules: [./resources]
listeners:
  - name: greeter
    handler: ./listeners/greeter.ts
  - name: toolbox
    handler: ${LISTENERS}toolbox.ts
    tools: [answer]
  - name: thief
    handler: ${LISTENERS}toolbox.ts
    payload: use-tool-thief
    trust: high
    tools: [write_file, read_file, run_command]
    tool_config:
      run_command: { shell: true }
      write_file: { allowed_paths: ["${dir}", "${dir}/**"] }
      read_file: { allowed_paths: ["${dir}", "${dir}/**"] }
  - name: triage
    agent: true
    description: Sorts requests by urgency.
    llm: { model: triage-model, script: ./scripts/triage.yaml }
`,
  );
  // The audit key and its checkpoints in the project too (by default they are under
  // ~/.config/organism): allowed_paths over the project then covers them.
  daemon = await startDaemonProcess(['--config', join(dir, 'organism.yaml')], {
    XDG_CONFIG_HOME: join(dir, '.config'),
  });
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  await rm(dir, { recursive: true, force: true });
});

const xml = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** Injects `payload` to `to`; the payload of `to`'s answer. */
async function ask(to: string, payload: string): Promise<string> {
  const injected = await call(daemon.url, '/api/v1/inject', { body: { to, payload } });
  expect(injected.status, injected.text).toBe(202);
  const thread = injected.json.thread as string;
  return until(async () => {
    const view = await call(daemon.url, `/api/v1/threads/${thread}`);
    const found = (
      view.json?.messages as Array<{ from: string; to: string; payload: string }> | undefined
    )?.find((m) => m.from === to && m.to === 'api');
    return found?.payload;
  }, 30_000);
}

/** The thief calls `tool`; the status and result (JSON text) it gets back. */
async function use(tool: string, args: Record<string, unknown>): Promise<{ status: string; result: string }> {
  const answer = await ask(
    'thief',
    `<use-tool-thief><tool>${tool}</tool><args>${xml(JSON.stringify(args))}</args></use-tool-thief>`,
  );
  return {
    status: /<status>([^<]*)<\/status>/.exec(answer)?.[1] ?? '',
    result: /<result>([^<]*)<\/result>/.exec(answer)?.[1] ?? '',
  };
}

/** The thief calls write_file. */
const write = (path: string, content: string) => use('write_file', { path, content });

const greet = () => ask('greeter', '<greeting><name>Ada</name></greeting>');
const answerTool = () => ask('toolbox', '<use-tool><tool>answer</tool><args>{}</args></use-tool>');
const triage = () => ask('triage', '<triage><task>a broken login</task></triage>');

describe("write_file against the organism's own code, allowed_paths covering the project", () => {
  it('answers as written before the attack', async () => {
    expect(await greet()).toContain('<text>Hello, Ada</text>');
    expect(await answerTool()).toContain('as written');
    expect(await triage()).toContain('Triage: a broken login is urgent.');
  });

  it.each(Object.keys(HOSTILE))(
    '%s: refused by absolute path, by .. and by ./ spelling; unchanged',
    async (file) => {
      const before = await readFile(join(dir, file), 'utf8');
      const [folder, name] = file.split('/') as [string, string];
      for (const path of [join(dir, file), `../${file}`, `./../${folder}/../${folder}/./${name}`]) {
        const { status, result } = await write(path, HOSTILE[file]!);
        expect(status, path).toBe('refused');
        expect(result, path).toContain('file.organism_code');
        expect(await readFile(join(dir, file), 'utf8'), path).toBe(before);
      }
    },
  );

  it('a new module in the tool_modules folder is refused; nothing is created', async () => {
    const { status, result } = await write(join(dir, 'tools/extra.ts'), TOOL.replace("'answer'", "'extra'"));
    expect(status).toBe('refused');
    expect(result).toContain('file.organism_code');
    expect(await readdir(join(dir, 'tools'))).toEqual(['answer.ts']);
  });

  it('prompt_modules and resource_modules: a module in them and a new one are refused; nothing changes', async () => {
    for (const [file, before] of [
      ['prompts/hello.ts', PROMPT],
      ['resources/doc.ts', RESOURCE],
      ['prompts/extra.ts', undefined],
      ['resources/extra.ts', undefined],
    ] as const) {
      const { status, result } = await write(join(dir, file), 'export default { owned: true };\n');
      expect(status, file).toBe('refused');
      expect(result, file).toContain('file.organism_code');
      expect(await readFile(join(dir, file), 'utf8').catch(() => undefined), file).toBe(before);
    }
  });

  it("the project's node_modules: a package in it and a new one are refused; nothing changes", async () => {
    // Not through node_modules/organism: that is a link to the checkout under test.
    for (const [file, before] of [
      ['node_modules/words-lib/index.js', WORDS],
      ['node_modules/new-package/index.js', undefined],
    ] as const) {
      for (const path of [join(dir, file), `../${file}`]) {
        const { status, result } = await write(path, 'export const owned = true;\n');
        expect(status, path).toBe('refused');
        expect(result, path).toContain('file.organism_code');
        expect(await readFile(join(dir, file), 'utf8').catch(() => undefined), path).toBe(before);
      }
    }
  });

  it('the audit key and its checkpoint folder are neither read nor written', async () => {
    // Outside data_dir on purpose (whoever cuts the log must not reach them): read, the key would
    // seal forged records; written or cut, the trail could be rewritten with them.
    const key = join(dir, '.config/organism/audit.key');
    const secret = (await readFile(key, 'utf8')).trim();
    for (const path of [key, '../.config/organism/audit.key']) {
      const read = await use('read_file', { path });
      expect(read.status, path).toBe('refused');
      expect(read.result, path).toContain('file.daemon_data');
      expect(read.result, path).not.toContain(secret.slice(0, 16));
      const written = await write(path, 'f'.repeat(64));
      expect(written.status, path).toBe('refused');
      expect(written.result, path).toContain('file.daemon_data');
    }
    expect((await readFile(key, 'utf8')).trim()).toBe(secret);
    const checkpoints = join(dir, '.config/organism/checkpoints');
    const held = await readdir(checkpoints).catch(() => [] as string[]);
    const planted = await write(join(checkpoints, 'code-attack-0000000000000000.jsonl'), '{}\n');
    expect(planted.status).toBe('refused');
    expect(planted.result).toContain('audit checkpoint folder');
    expect(await readdir(checkpoints).catch(() => [] as string[])).toEqual(held);
  });

  it('a symlink in the workspace to the handler is refused; the handler is unchanged', async () => {
    const { status, result } = await write('greeter-link.ts', HOSTILE['listeners/greeter.ts']!);
    expect(status).toBe('refused');
    expect(result).toContain('file.organism_code');
    expect(await readFile(join(dir, 'listeners/greeter.ts'), 'utf8')).toBe(GREETER);
  });

  it('run_command in its sandbox can neither write nor see the code in the project', async () => {
    const files = Object.keys(HOSTILE).map((f) => join(dir, f));
    const command = files.map((f) => `echo owned > ${f}; cat ${f}`).join('; ');
    const args = xml(JSON.stringify({ command }));
    const answer = await ask(
      'thief',
      `<use-tool-thief><tool>run_command</tool><args>${args}</args></use-tool-thief>`,
    );
    expect(answer).toContain('<status>ok</status>');
    // The config's folder is covered by an empty one: the code is not there to write or read.
    expect(answer).toMatch(/cannot create [^"]*listeners\/greeter.ts: Directory nonexistent/);
    expect(answer).toMatch(/cat: [^"]*scripts\/triage.yaml: No such file or directory/);
    for (const file of Object.keys(HOSTILE))
      expect(await readFile(join(dir, file), 'utf8'), file).not.toContain('owned');
  });

  it('other files of the project are still written, and read_file still reads the code', async () => {
    const { status } = await write(join(dir, 'notes.txt'), 'a note\n');
    expect(status).toBe('ok');
    expect(await readFile(join(dir, 'notes.txt'), 'utf8')).toBe('a note\n');
    const read = await ask(
      'thief',
      `<use-tool-thief><tool>read_file</tool><args>${xml(JSON.stringify({ path: join(dir, 'lib/words.ts') }))}</args></use-tool-thief>`,
    );
    expect(read).toContain('<status>ok</status>');
    expect(read).toContain('GREETING');
  });

  it('after organism reload, every listener answers as before', async () => {
    const reloaded = await runCli(['reload', '--config', join(dir, 'organism.yaml')]);
    expect(reloaded.code, reloaded.stdout + reloaded.stderr).toBe(0);
    expect(await greet()).toContain('<text>Hello, Ada</text>');
    expect(await answerTool()).toContain('as written');
    expect(await triage()).toContain('Triage: a broken login is urgent.');
    // The protected set is the reloaded organism's too.
    const again = await write(join(dir, 'lib/words.ts'), HOSTILE['lib/words.ts']!);
    expect(again.result).toContain('file.organism_code');
    expect(await readFile(join(dir, 'lib/words.ts'), 'utf8')).toBe(WORDS);
  });

  it('a listener a reload adds has its handler protected from then on', async () => {
    const parrot = GREETER.replace("'greeting'", "'say'").replace("'greeted'", "'said'");
    await writeFile(join(dir, 'listeners/parrot.ts'), parrot);
    const file = join(dir, 'organism.yaml');
    await writeFile(
      file,
      `${await readFile(file, 'utf8')}  - name: parrot\n    handler: ./listeners/parrot.ts\n`,
    );
    const reloaded = await runCli(['reload', '--config', file]);
    expect(reloaded.code, reloaded.stdout + reloaded.stderr).toBe(0);
    const { status, result } = await write(
      join(dir, 'listeners/parrot.ts'),
      HOSTILE['listeners/greeter.ts']!,
    );
    expect(status).toBe('refused');
    expect(result).toContain('file.organism_code');
    expect(await readFile(join(dir, 'listeners/parrot.ts'), 'utf8')).toBe(parrot);
  });
});
