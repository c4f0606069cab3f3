/**
 * The symlink race made deterministic: the swap happens exactly between the tools' path check and
 * their first open. `node:fs/promises` is wrapped so that the first `open` or `opendir` after the
 * check (which opens nothing) first replaces `notes/real`, a real folder when the path was
 * checked, with a link to an outside folder of the same shape; the wrapper also records every
 * file (not folder) opened in the outside folder. files-race.test.ts runs the same race with a
 * real concurrent process; this one shows each tool refusing the one interleaving that matters,
 * every time.
 */
import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import listDir from '../../tools/list-dir.ts';
import readFileTool from '../../tools/read-file.ts';
import writeFileTool from '../../tools/write-file.ts';
import { makeContext } from './tool-helpers.ts';

/** The armed swap and when it goes off: before the first `open`/`opendir` whose path `when` accepts. */
const hook = vi.hoisted(() => ({
  swap: undefined as undefined | (() => Promise<void>),
  when: ((_path: string) => true) as (where: string) => boolean,
  /** The outside folder, and what was opened in it that is not a folder (opening one has no effect). */
  outside: '',
  openedOutside: [] as string[],
}));

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const fire = async (where: unknown) => {
    const swap = hook.swap;
    if (swap === undefined || !hook.when(String(where))) return;
    hook.swap = undefined;
    await swap();
  };
  const open: typeof fs.open = async (...args) => {
    await fire(args[0]);
    const handle = await fs.open(...args);
    const real = await fs.readlink(`/proc/self/fd/${handle.fd}`);
    if (hook.outside && real.startsWith(hook.outside) && !(await handle.stat()).isDirectory()) {
      hook.openedOutside.push(real);
    }
    return handle;
  };
  const opendir: typeof fs.opendir = async (...args) => {
    await fire(args[0]);
    return fs.opendir(...args);
  };
  return { ...fs, default: { ...fs, open, opendir }, open, opendir };
});

let root: string;
let ws: string;
let outside: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'organism-swap-'));
  ws = path.join(root, 'ws');
  outside = path.join(root, 'outside');
  hook.outside = outside;
  hook.openedOutside = [];
  for (const [base, text] of [
    [path.join(ws, 'notes', 'real'), 'inside\n'],
    [outside, 'OUTSIDE SECRET\n'],
  ] as const) {
    await mkdir(path.join(base, 'sub'), { recursive: true });
    await writeFile(path.join(base, 'sub', 'f.txt'), text);
  }
  await writeFile(path.join(outside, 'sub', 'outside-only.txt'), 'OUTSIDE SECRET\n');
  arm();
});

/** Arms the swap of notes/real (a real folder) for a link to the outside folder, once. */
function arm(when: (where: string) => boolean = () => true): void {
  hook.when = when;
  hook.swap = async () => {
    await rename(path.join(ws, 'notes', 'real'), path.join(ws, 'notes', '.stash'));
    await symlink(outside, path.join(ws, 'notes', 'real'));
  };
}

/** Puts the real folder back after a swap. */
async function restore(): Promise<void> {
  if ((await lstat(path.join(ws, 'notes', 'real'))).isSymbolicLink()) {
    await unlink(path.join(ws, 'notes', 'real'));
    await rename(path.join(ws, 'notes', '.stash'), path.join(ws, 'notes', 'real'));
  }
}

afterEach(async () => {
  hook.swap = undefined;
  await rm(root, { recursive: true, force: true });
});

/** Every entry below `dir` (links not followed), with files' content. */
async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    out[path.relative(dir, full)] = entry.isFile() ? await readFile(full, 'utf8') : '<not a file>';
  }
  return out;
}

describe.each([
  ['allowed_paths notes/**', { allowed_paths: ['notes/**'] }],
  ['the whole workspace', {}],
])('a parent folder swapped for a link between check and open (%s)', (_label, config) => {
  const ctx = () => makeContext({ config, workspace: ws });

  it('read_file refuses, having opened nothing outside but a folder', async () => {
    const error = await readFileTool.run({ path: 'notes/real/sub/f.txt' }, ctx()).catch((e) => e);
    expect(hook.swap).toBeUndefined();
    expect(error).toMatchObject({ code: 'file.path_refused', details: { rule_id: 'file.symlink_escape' } });
    expect(JSON.stringify(error)).not.toContain('OUTSIDE');
    expect(hook.openedOutside).toEqual([]);
  });

  it('write_file creates nothing outside, overwrites nothing there, and leaves no temp file', async () => {
    const before = await tree(outside);
    for (const args of [
      { path: 'notes/real/sub/f.txt', content: 'pwned\n' },
      { path: 'notes/real/sub/new.txt', content: 'pwned\n' },
      { path: 'notes/real/sub/deeper/new.txt', content: 'pwned\n' },
      { path: 'notes/real/sub/f.txt', content: 'pwned\n', mode: 'append' as const },
    ]) {
      // Each call gets its own swap: the folder back in place, the swap armed again.
      await restore();
      arm();
      const error = await writeFileTool.run(args, ctx()).catch((e) => e);
      expect(hook.swap, args.path).toBeUndefined();
      expect(error, args.path).toMatchObject({ code: 'file.path_refused' });
    }
    expect(await tree(outside)).toEqual(before);
    expect(Object.keys(await tree(root)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(hook.openedOutside).toEqual([]);
  });

  it('list_dir refuses to list the folder it opened outside', async () => {
    const result = await listDir.run({ path: 'notes/real/sub' }, ctx()).catch((e) => e);
    expect(hook.swap).toBeUndefined();
    expect(result).toMatchObject({ code: 'file.path_refused', details: { rule_id: 'file.symlink_escape' } });
  });

  it('a recursive list_dir does not descend into a folder swapped during the walk', async () => {
    // The swap comes when the walk, having listed `notes` with `real` as a folder, opens `real`.
    arm((where) => path.basename(where) === 'real');
    const result = await listDir.run({ path: 'notes', recursive: true }, ctx());
    expect(hook.swap).toBeUndefined();
    expect(result.entries.map((e) => e.name).filter((n) => n.includes('outside-only'))).toEqual([]);
  });
});
