/**
 * A program started in the sandbox from a covered place: the user's project is the config's folder
 * (covered, it holds .env), or lives under /tmp (private inside). Its script and the node_modules it
 * imports from are brought back read-only; nothing else of the covered folder is.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BubblewrapSandbox } from '../../src/sandbox/bubblewrap.ts';
import { programReadOnlyPaths } from '../../src/sandbox/program-paths.ts';
import type { SandboxRequest } from '../../src/sandbox/types.ts';

const tops: string[] = [];
afterAll(async () => {
  for (const top of tops) await rm(top, { recursive: true, force: true });
});

/** A project: .env (a secret), node_modules/dep, servers/server.mjs importing dep and probing. */
async function project(parent: string) {
  const top = await realpath(await mkdtemp(path.join(parent, 'organism-ro-')));
  tops.push(top);
  await writeFile(path.join(top, '.env'), 'SECRET=hunter2-in-dotenv\n');
  await writeFile(path.join(top, 'organism.yaml'), 'x: 1\n');
  await mkdir(path.join(top, 'node_modules', 'dep'), { recursive: true });
  await writeFile(
    path.join(top, 'node_modules', 'dep', 'package.json'),
    '{"name":"dep","type":"module","main":"index.js"}',
  );
  await writeFile(path.join(top, 'node_modules', 'dep', 'index.js'), 'export const value = "dep-loaded";\n');
  await mkdir(path.join(top, 'servers'));
  const script = path.join(top, 'servers', 'server.mjs');
  await writeFile(
    script,
    `import { readFileSync, readdirSync } from 'node:fs';
import { value } from 'dep';
let env = 'no .env';
try { env = readFileSync(${JSON.stringify(path.join(top, '.env'))}, 'utf8'); } catch {}
let yaml = 'no organism.yaml';
try { yaml = readFileSync(${JSON.stringify(path.join(top, 'organism.yaml'))}, 'utf8'); } catch {}
console.log(JSON.stringify({ value, env, yaml, listing: readdirSync(${JSON.stringify(top)}).sort() }));
`,
  );
  const ws = path.join(top, 'data', 'workspace');
  await mkdir(ws, { recursive: true });
  return { top, script, ws };
}

const sandbox = new BubblewrapSandbox();

function request(top: string, ws: string, argv: string[], readOnly?: string[]): SandboxRequest {
  return {
    argv,
    cwd: ws,
    workspace: ws,
    hide: [top, path.join(top, '.env'), path.join(top, 'data')],
    envAllowlist: [],
    network: false,
    limits: { maxProcesses: 32, maxMemoryMb: 512 },
    ...(readOnly ? { readOnly } : {}),
  };
}

function run(req: SandboxRequest) {
  const plan = sandbox.plan(req);
  const [bin, ...args] = plan.argv;
  return spawnSync(bin!, args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8', timeout: 20_000 });
}

describe('read-only paths brought back into the sandbox', () => {
  let inConfig: Awaited<ReturnType<typeof project>>;
  let inTmp: Awaited<ReturnType<typeof project>>;
  beforeAll(async () => {
    expect(sandbox.unavailable()).toBeNull();
    inConfig = await project('/var/tmp');
    inTmp = await project('/tmp');
  });

  it('runs a script from the covered project folder, with its node_modules, and nothing else of it', () => {
    const { top, script, ws } = inConfig;
    const argv = ['/usr/bin/node', script];
    // Without them the script is not there at all.
    expect(run(request(top, ws, argv)).status).not.toBe(0);
    const readOnly = programReadOnlyPaths(argv, request(top, ws, argv).hide);
    expect(readOnly.sort()).toEqual([path.join(top, 'node_modules'), path.join(top, 'servers')]);
    const ran = run(request(top, ws, argv, readOnly));
    expect(ran.stderr).toBe('');
    const seen = JSON.parse(ran.stdout);
    expect(seen).toMatchObject({ value: 'dep-loaded', env: 'no .env', yaml: 'no organism.yaml' });
    // The covered folder shows the two brought back and the workspace's way in, not .env or the yaml.
    expect(seen.listing).toEqual(['data', 'node_modules', 'servers']);
  });

  it('runs a script from a project under /tmp (private inside the sandbox)', () => {
    const { top, script, ws } = inTmp;
    const argv = ['/usr/bin/node', script];
    expect(run(request(top, ws, argv)).status).not.toBe(0);
    const ran = run(request(top, ws, argv, programReadOnlyPaths(argv, request(top, ws, argv).hide)));
    expect(JSON.parse(ran.stdout)).toMatchObject({ value: 'dep-loaded', env: 'no .env' });
  });

  it('brings back only the script when its folder holds a hidden path, and refuses to uncover one', async () => {
    const { top, ws } = inConfig;
    const beside = path.join(top, 'beside.mjs');
    await writeFile(beside, 'console.log("beside")\n');
    const readOnly = programReadOnlyPaths(['/usr/bin/node', beside], [top, path.join(top, '.env')]);
    expect(readOnly).toContain(beside);
    expect(readOnly).not.toContain(top);
    const ran = run(request(top, ws, ['/usr/bin/node', beside], readOnly));
    expect(ran.stdout.trim()).toBe('beside');
    expect(() => run(request(top, ws, ['/usr/bin/node', '-e', '1'], [top]))).toThrow(/holds .*must not see/);
    expect(() => run(request(top, ws, ['/usr/bin/node', '-e', '1'], [path.join(top, '.env')]))).toThrow(
      /must not see/,
    );
  });
});
