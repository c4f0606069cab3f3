/**
 * Issue 25 point 8: the file tools treat the credential files package managers and CLIs keep like
 * .env. With the real daemon (bin/organism.js) and a listener granted read_file, write_file and
 * list_dir at the default (medium) trust, a workspace holding a project's .npmrc (a registry
 * token), a .pypirc, a .yarnrc.yml, docker and kube configs: none is read or written, each refusal
 * says why, and the token shows nowhere in the thread. Ordinary files beside them still work.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import {
  AUTH_YAML,
  call,
  LISTENERS,
  OPERATOR_TOKEN,
  organismDir,
  startOn,
  TOKENS_ENV,
  until,
} from '../server/helpers.ts';

const NPM_TOKEN = 'npm_Tq4Xw8Lr2Vb6Nc9Zk3Hs7Jd1Fg5Pm0Ay';
let ws: string;
let daemon: DaemonProcess;

/** The files a project or a home folder keeps credentials in, with the token in each. */
const FILES: Record<string, string> = {
  '.npmrc': `//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n`,
  'packages/app/.npmrc': `//npm.pkg.github.com/:_authToken=${NPM_TOKEN}\n`,
  '.yarnrc.yml': `npmAuthToken: ${NPM_TOKEN}\n`,
  '.pypirc': `[pypi]\nusername = __token__\npassword = ${NPM_TOKEN}\n`,
  '.netrc': `machine example.com login me password ${NPM_TOKEN}\n`,
  '.docker/config.json': `{"auths":{"registry.example":{"auth":"${NPM_TOKEN}"}}}\n`,
  '.kube/config': `users:\n- name: me\n  user:\n    token: ${NPM_TOKEN}\n`,
  '.m2/settings.xml': `<settings><servers><server><password>${NPM_TOKEN}</password></server></servers></settings>\n`,
};

beforeAll(async () => {
  const made = await organismDir(`organism:
  name: credential-files
  workspace: ./ws
${AUTH_YAML}listeners:
  - name: toolbox
    handler: ${LISTENERS}toolbox.ts
    tools: [read_file, write_file, list_dir]
`);
  ws = join(made.dir, 'ws');
  for (const [path, content] of Object.entries(FILES)) {
    await mkdir(join(ws, path, '..'), { recursive: true });
    await writeFile(join(ws, path), content);
  }
  await writeFile(join(ws, 'README.md'), 'an ordinary file\n');
  daemon = await startOn(made.file, TOKENS_ENV);
});
afterAll(async () => {
  await daemon?.stop();
});

/** Calls `tool` through the toolbox listener; returns its status and result (JSON text). */
async function use(tool: string, args: object): Promise<{ status: string; result: any; thread: string }> {
  const json = JSON.stringify(args).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  const injected = await call(daemon.url, '/api/v1/inject', {
    token: OPERATOR_TOKEN,
    body: { to: 'toolbox', payload: `<use-tool><tool>${tool}</tool><args>${json}</args></use-tool>` },
  });
  expect(injected.status).toBe(202);
  const thread = injected.json.thread as string;
  const answer = await until(async () => {
    const { json: view } = await call(daemon.url, `/api/v1/threads/${thread}`, { token: OPERATOR_TOKEN });
    return (view?.messages as Array<{ from: string; to: string; payload: string }> | undefined)?.find(
      (m) => m.from === 'toolbox' && m.to === 'api',
    );
  });
  const status = /<status>([^<]*)<\/status>/.exec(answer.payload)![1]!;
  const text = /<result>([^<]*)<\/result>/.exec(answer.payload)![1]!;
  const unescaped = text
    .replaceAll('&quot;', '"')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
  return { status, result: JSON.parse(unescaped), thread };
}

describe('credential files in the workspace, through the file tools of the real daemon', () => {
  it.each(Object.keys(FILES))('read_file %s is refused as sensitive; the token is nowhere', async (path) => {
    const { status, result, thread } = await use('read_file', { path });
    expect(status).toBe('refused');
    expect(JSON.stringify(result)).toMatch(/file\.sensitive/);
    expect(JSON.stringify(result)).toMatch(/holds credentials/);
    const view = await call(daemon.url, `/api/v1/threads/${thread}`, { token: OPERATOR_TOKEN });
    expect(view.text).not.toContain(NPM_TOKEN.slice(4, 20));
  });

  it('write_file of .npmrc and .pypirc is refused and leaves them as they were', async () => {
    for (const path of ['.npmrc', '.pypirc', 'packages/app/.npmrc']) {
      const { status, result } = await use('write_file', {
        path,
        content: 'registry=https://evil.example/\n',
      });
      expect(status, path).toBe('refused');
      expect(JSON.stringify(result), path).toMatch(/file\.sensitive/);
      expect(await readFile(join(ws, path), 'utf8')).toBe(FILES[path]);
    }
  });

  it('list_dir of .kube and .docker is refused; the workspace and an ordinary file still work', async () => {
    expect((await use('list_dir', { path: '.kube' })).status).toBe('refused');
    const listed = await use('list_dir', { path: '.' });
    expect(listed.status).toBe('ok');
    const readme = await use('read_file', { path: 'README.md' });
    expect(readme.status).toBe('ok');
    expect(JSON.stringify(readme.result)).toContain('an ordinary file');
  });
});
