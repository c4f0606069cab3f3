/**
 * A user's TypeScript listener under the compiled runtime (dist/, as `organism run` loads it), in a
 * `"type": "commonjs"` project (what `npm init -y` writes) and in a `"type": "module"` one: it
 * loads, a handler's stack trace names the user's file and line (not a `data:` URL of transpiled
 * code), and an edit of the module, or of a helper it imports, is what the next import returns.
 * Each case runs in a child `node` process, because under vitest TypeScript loads through vite;
 * the last one through the real daemon and its reload endpoint.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { daemonFetch, startDaemonProcess } from '../helpers/daemon.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const IMPORT_MODULE = join(ROOT, 'dist/src/listener/import-module.js');

const LISTENER = (word: string) => `import { defineListener } from 'organism';
import { shout } from './lib/shout.ts';

interface Input { name: string }

export default defineListener<Input>({
  payload: { tag: 'boom', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
  handler: (payload: Input) => {
    throw new Error(shout('${word} ' + payload.name));
  },
});
`;
const HELPER = (suffix: string) => `export function shout(text: string): string {
  return text.toUpperCase() + '${suffix}';
}
`;

/** Imports the listener, calls its handler, edits the files between imports; prints what it saw. */
const DRIVER = `
import { writeFileSync } from 'node:fs';
const { importUserModule, defaultExport } = await import(${JSON.stringify(IMPORT_MODULE)});
const [file, helper, edits] = [process.argv[2], process.argv[3], JSON.parse(process.argv[4])];
const seen = [];
for (const edit of edits) {
  if (edit.listener) writeFileSync(file, edit.listener);
  if (edit.helper) writeFileSync(helper, edit.helper);
  const mod = await importUserModule(file);
  const listener = defaultExport(mod, (v) => typeof v?.handler === 'function');
  try {
    await listener.handler({ name: 'ada' }, {});
  } catch (error) {
    seen.push({ message: error.message, frame: error.stack.split('\\n')[1] });
  }
}
process.stdout.write(JSON.stringify(seen));
`;

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function project(type: 'commonjs' | 'module'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `organism-${type}-`));
  dirs.push(dir);
  await mkdir(join(dir, 'node_modules'), { recursive: true });
  await mkdir(join(dir, 'listeners', 'lib'), { recursive: true });
  await symlink(ROOT.replace(/\/$/, ''), join(dir, 'node_modules', 'organism'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: `user-${type}`, private: true, type }));
  await writeFile(join(dir, 'driver.mjs'), DRIVER);
  return dir;
}

for (const type of ['commonjs', 'module'] as const) {
  describe(`a TypeScript listener in a "type": "${type}" project`, () => {
    it('loads; its stack trace shows the file and line; an edited handler or helper replaces the old one', async () => {
      const dir = await project(type);
      const file = join(dir, 'listeners', 'boom.ts');
      const helper = join(dir, 'listeners', 'lib', 'shout.ts');
      const edits = [
        { listener: LISTENER('hello'), helper: HELPER('!') },
        { listener: LISTENER('goodbye') },
        { helper: HELPER('?') },
        {},
      ];
      const { stdout } = await run(
        process.execPath,
        [join(dir, 'driver.mjs'), file, helper, JSON.stringify(edits)],
        {
          cwd: dir,
        },
      );
      const seen = JSON.parse(stdout) as { message: string; frame: string }[];
      expect(seen.map((s) => s.message)).toEqual([
        'HELLO ADA!',
        'GOODBYE ADA!',
        'GOODBYE ADA?',
        'GOODBYE ADA?',
      ]);
      // The throw is in the listener (line 9 of LISTENER); the frame says so, with no data: URL.
      for (const { frame } of seen) {
        expect(frame).toContain(`${file}:9:`);
        expect(frame).not.toContain('data:');
      }
    }, 60_000);
  });
}

const SAYER = `import { defineListener } from 'organism';
import { word } from './lib/word.js';

export default defineListener<{ n: string }>({
  payload: { tag: 'say', schema: { type: 'object', properties: { n: { type: 'string' } }, required: ['n'] } },
  handler: (payload, ctx) => {
    ctx.log.info('said ' + word() + ' ' + payload.n);
  },
});
`;
const WORD = (word: string) => `export const word = (): string => '${word}';\n`;

for (const type of ['commonjs', 'module'] as const) {
  describe(`the daemon, with a TypeScript listener in a "type": "${type}" project`, () => {
    it('POST /api/v1/organism/reload runs the edited helper of the listener from then on', async () => {
      const dir = await project(type);
      await writeFile(join(dir, 'listeners', 'say.ts'), SAYER);
      await writeFile(join(dir, 'listeners', 'lib', 'word.ts'), WORD('one'));
      const config = join(dir, 'organism.yaml');
      await writeFile(
        config,
        'organism:\n  name: reload-test\nlisteners:\n  - name: say\n    description: says\n    handler: ./listeners/say.ts\n',
      );
      const daemon = await startDaemonProcess(['--config', config]);
      try {
        const inject = async (n: string) => {
          const res = await daemonFetch(`${daemon.url}/api/v1/inject`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ to: 'say', payload: `<say><n>${n}</n></say>` }),
          });
          expect(res.status).toBe(202);
        };
        const said = () => [...daemon.stdout().matchAll(/said (\w+ \w+)/g)].map((m) => m[1]);
        const until = async (count: number) => {
          for (let i = 0; i < 200 && said().length < count; i++) await new Promise((r) => setTimeout(r, 25));
        };
        await inject('a');
        await until(1);
        await writeFile(join(dir, 'listeners', 'lib', 'word.ts'), WORD('two'));
        const reload = await daemonFetch(`${daemon.url}/api/v1/organism/reload`, { method: 'POST' });
        expect(reload.status).toBe(200);
        await inject('b');
        await until(2);
        expect(said()).toEqual(['one a', 'two b']);
      } finally {
        await daemon.stop();
      }
    }, 60_000);
  });
}
