/**
 * The symlink race against the file tools (issue 14): another process swaps a parent folder,
 * `notes/real`, between a real folder and a symbolic link to a folder outside the workspace about
 * every millisecond, while read_file, write_file and list_dir are called on paths through it. A
 * path checked while `notes/real` is a folder and opened while it is a link leads outside; the
 * tools must notice (they check what they actually opened) and refuse, never read, list or write
 * the outside folder, and never leave a temp file behind.
 *
 * The swapper is a separate Node process so it truly runs at the same time as the calls. Calls
 * may fail during the race (not found, refused); what matters is what they touched.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ToolConfig } from '../../src/tools/types.ts';
import listDir from '../../tools/list-dir.ts';
import readFileTool from '../../tools/read-file.ts';
import writeFileTool from '../../tools/write-file.ts';
import { makeContext } from './tool-helpers.ts';

const CALLS = 1000;
const PARALLEL = 8;
const OUTSIDE_TEXT = 'OUTSIDE SECRET\n';

/**
 * Swaps `notes/real` between the real folder and a link to the outside folder every ~1 ms until
 * killed, and prints how many swaps it made. A folder the tools create at `notes/real` in the gap
 * between two renames is moved aside (inside the workspace) so the swapping goes on.
 */
const SWAPPER = `
const fs = require('node:fs');
const path = require('node:path');
const [notes, outside] = process.argv.slice(1);
const real = path.join(notes, 'real');
const stash = path.join(notes, '.stash');
const tick = new Int32Array(new SharedArrayBuffer(4));
let swaps = 0, made = 0, stop = false;
process.on('SIGTERM', () => { stop = true; });
const aside = () => fs.renameSync(real, path.join(notes, '.made-' + made++));
// The tools may create notes/real again between aside() and the rename (eight calls run at
// once), so this moves their folder aside as often as it takes.
function into(from) {
  for (let tries = 0; ; tries++) {
    try { return fs.renameSync(from, real); } catch (error) {
      if (tries > 100 || !['EISDIR', 'ENOTEMPTY', 'EEXIST', 'ENOTDIR'].includes(error.code)) throw error;
      try { aside(); } catch {}
    }
  }
}
function toLink() {
  fs.renameSync(real, stash);
  const tmp = path.join(notes, '.link-tmp');
  fs.symlinkSync(outside, tmp);
  into(tmp);
}
function toFolder() {
  fs.unlinkSync(real);
  into(stash);
}
function loop() {
  // In bursts, so the SIGTERM handler gets its turn between them.
  for (let i = 0; i < 5 && !stop; i++) {
    toLink(); Atomics.wait(tick, 0, 0, 1);
    toFolder(); Atomics.wait(tick, 0, 0, 1);
    swaps++;
  }
  if (stop) { process.stdout.write(String(swaps)); process.exit(0); }
  setImmediate(loop);
}
process.stdout.write('ready\\n');
loop();
`;

interface Swapper {
  child: ChildProcess;
  /** Stops it (it leaves `notes/real` a real folder) and returns how many swaps it made. */
  stop(): Promise<number>;
}

function startSwapper(notes: string, outside: string): Promise<Swapper> {
  const child = spawn(process.execPath, ['-e', SWAPPER, notes, outside], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c) => {
    out += c;
  });
  child.stderr!.on('data', (c) => {
    err += c;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`swapper exited ${code}: ${err}`)));
    child.stdout!.once('data', () =>
      resolve({
        child,
        async stop() {
          child.kill('SIGTERM');
          const code = await exited;
          if (code !== 0) throw new Error(`swapper failed (${code}): ${err}`);
          return Number(out.replace('ready\n', ''));
        },
      }),
    );
  });
}

/** Runs `task(i)` for i in 0..count-1, `PARALLEL` at a time. */
async function pool(count: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/** Every entry below `dir` (links not followed), as paths relative to it, with files' content. */
async function snapshot(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (rel: string) => {
    for (const entry of await readdir(path.join(dir, rel), { withFileTypes: true })) {
      const name = path.join(rel, entry.name);
      if (entry.isDirectory()) {
        out.set(`${name}/`, '<dir>');
        await walk(name);
      } else if (entry.isFile()) out.set(name, await readFile(path.join(dir, name), 'utf8'));
      else out.set(name, `<${entry.isSymbolicLink() ? 'link' : 'other'}>`);
    }
  };
  await walk('');
  return out;
}

let root: string;
let ws: string;
let notes: string;
let outside: string;
let swapper: Swapper | undefined;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'organism-race-'));
  ws = path.join(root, 'ws');
  notes = path.join(ws, 'notes');
  outside = path.join(root, 'outside');
  await mkdir(path.join(notes, 'real'), { recursive: true });
  await writeFile(path.join(notes, 'real', 'f.txt'), 'inside\n');
  await writeFile(path.join(notes, 'real', 'inside-only.txt'), 'inside\n');
  await mkdir(path.join(outside, 'sub'), { recursive: true });
  await writeFile(path.join(outside, 'f.txt'), OUTSIDE_TEXT);
  await writeFile(path.join(outside, 'outside-only.txt'), OUTSIDE_TEXT);
  await writeFile(path.join(outside, 'sub', 'outside-deep.txt'), OUTSIDE_TEXT);
  // Targets of write_file already there outside, so an append through the link would change them.
  for (let k = 0; k < 4; k++) await writeFile(path.join(outside, `w-${k}.txt`), OUTSIDE_TEXT);
  // A link that stays put, so list_dir's "symlinks are listed, not followed" is raced too.
  await symlink(outside, path.join(notes, 'fixed-link'));
});

afterEach(async () => {
  await swapper?.stop().catch(() => {});
  swapper = undefined;
  await rm(root, { recursive: true, force: true });
});

/** Every `*.tmp` anywhere below the test's folder, inside the workspace or outside it. */
async function tempFiles(): Promise<string[]> {
  return [...(await snapshot(root)).keys()].filter((name) => name.endsWith('.tmp'));
}

/**
 * Makes `CALLS` calls while the swapper runs and says how many succeeded, how many failed (a
 * refusal or an error the race caused) and how many swaps happened meanwhile. Checks that the
 * swapping overlapped the calls and that some calls got through, so the race was really run.
 */
async function underSwap(tool: string, call: (i: number) => Promise<unknown>): Promise<void> {
  swapper = await startSwapper(notes, outside);
  let ok = 0;
  let failed = 0;
  await pool(CALLS, async (i) => {
    try {
      await call(i);
      ok++;
    } catch {
      failed++;
    }
  });
  const swaps = await swapper.stop();
  swapper = undefined;
  console.log(`${tool}: ${CALLS} calls, ${ok} ok, ${failed} failed, ${swaps} swaps meanwhile`);
  expect(swaps).toBeGreaterThanOrEqual(10);
  expect(ok).toBeGreaterThan(0);
}

const CONFIGS: [string, ToolConfig][] = [
  ['allowed_paths notes/**', { allowed_paths: ['notes/**'] }],
  ['the whole workspace', {}],
];

describe.each(CONFIGS)('file tools under a parent-folder swap (%s)', (_label, config) => {
  const ctx = () => makeContext({ config, workspace: ws });

  it(`read_file: ${CALLS} reads never return the outside file`, async () => {
    const seen = new Set<string>();
    await underSwap('read_file', async () => {
      try {
        seen.add((await readFileTool.run({ path: 'notes/real/f.txt' }, ctx())).content);
      } catch (error) {
        seen.add(JSON.stringify(error));
        throw error;
      }
    });
    expect([...seen].filter((text) => text.includes('OUTSIDE'))).toEqual([]);
  });

  it(`write_file: ${CALLS} writes create and change nothing outside, and leave no temp file`, async () => {
    const before = await snapshot(outside);
    await underSwap('write_file', (i) =>
      writeFileTool.run(
        // Overwrite and append, to existing names and new ones, in an existing folder and a new one.
        {
          path: i % 3 === 2 ? `notes/real/new-${i % 5}/w-${i % 4}.txt` : `notes/real/w-${i % 4}.txt`,
          content: `written ${i}\n`,
          mode: i % 2 ? 'append' : 'overwrite',
        },
        ctx(),
      ),
    );
    const after = await snapshot(outside);
    const touched = [...new Set([...before.keys(), ...after.keys()])].filter(
      (k) => before.get(k) !== after.get(k),
    );
    expect(touched).toEqual([]);
    expect(await tempFiles()).toEqual([]);
  });

  it(`list_dir: ${CALLS} listings never show the outside folder's entries`, async () => {
    const listed = new Set<string>();
    await underSwap('list_dir', async (i) => {
      const args = i % 2 ? { path: 'notes/real' } : { path: 'notes', recursive: true };
      for (const entry of (await listDir.run(args, ctx())).entries) listed.add(entry.name);
    });
    expect([...listed].filter((name) => /outside-(only|deep)\.txt$|(^|\/)sub$/.test(name))).toEqual([]);
  });
});
