/**
 * Where `organism init` may write, checked before anything is written, and writes that do not
 * follow a link made in between. A checkout can hold symbolic links (a package.json that points
 * into another project, a listeners/ folder that points anywhere, a dangling .gitignore): written
 * through, they changed or created files outside the project. So every path init would write, and
 * every folder on the way, is looked at with lstat first; a link or something that is not a plain
 * file (or folder) refuses the whole run. The writes then create new files with O_EXCL (which does
 * not follow a link at the last step) and replace existing ones by renaming a new file over them
 * (a rename replaces the name, never writes through it: a hard-linked file keeps its other name's
 * content), after checking that each folder still is where it was.
 */

import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readlink, realpath, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ProjectWriteError } from '../../errors.ts';

/** What is at a path now: nothing, a plain file, a folder, or something init refuses. */
type Found = 'missing' | 'file' | 'folder' | 'link' | 'other';

async function found(path: string): Promise<{ kind: Found; target?: string }> {
  const info = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
    throw error;
  });
  if (info === undefined) return { kind: 'missing' };
  if (info.isSymbolicLink()) return { kind: 'link', target: await readlink(path).catch(() => '?') };
  if (info.isFile()) return { kind: 'file' };
  if (info.isDirectory()) return { kind: 'folder' };
  return { kind: 'other' };
}

/** The folder init writes into, as given: followed when it is a link (the user named it). */
export async function projectRoot(dir: string): Promise<{ root: string; exists: boolean }> {
  const here = await found(dir);
  if (here.kind === 'missing') return { root: dir, exists: false };
  if (here.kind === 'link') {
    const real = await realpath(dir).catch(() => undefined);
    if (real === undefined) {
      throw new ProjectWriteError(
        'init.unsafe_path',
        `${dir} is a symbolic link to ${here.target}, which does not exist; give a folder to write the project into`,
        { path: dir },
      );
    }
    return projectRoot(real);
  }
  if (here.kind !== 'folder') {
    throw new ProjectWriteError(
      'init.unsafe_path',
      `${dir} is a ${here.kind === 'file' ? 'file' : 'special file'}, not a folder; give a folder to write the project into`,
      { path: dir },
    );
  }
  return { root: dir, exists: true };
}

/** The result of checking every path init would write: what exists, and the folders to make. */
export interface WritePlan {
  root: string;
  /** Relative paths of the files that exist (plain files). */
  existing: Set<string>;
  /** Absolute folders to create, parents first. */
  folders: string[];
}

/**
 * Looks at every file init would write (relative to `root`) and every folder on the way, without
 * following links. Throws ProjectWriteError naming each problem when one is a link, a folder is a
 * file, or a file is a folder or a special file (a FIFO would block the read); nothing is written.
 */
export async function checkPlan(root: string, files: readonly string[]): Promise<WritePlan> {
  const problems: string[] = [];
  const existing = new Set<string>();
  const folders: string[] = [];
  const seen = new Map<string, Found>();
  const look = async (path: string) => {
    let kind = seen.get(path);
    if (kind === undefined) {
      const here = await found(path);
      kind = here.kind;
      seen.set(path, kind);
      if (kind === 'link') problems.push(`${path} is a symbolic link (to ${here.target})`);
    }
    return kind;
  };
  for (const file of files) {
    const parts = file.split('/');
    let path = root;
    let missing = false;
    for (let i = 0; i < parts.length; i++) {
      path = join(path, parts[i]!);
      const last = i === parts.length - 1;
      if (missing) {
        if (!last && !folders.includes(path)) folders.push(path);
        continue;
      }
      const kind = await look(path);
      if (kind === 'missing') {
        missing = true;
        if (!last && !folders.includes(path)) folders.push(path);
        continue;
      }
      if (kind === 'link') break;
      if (!last && kind !== 'folder') {
        const problem = `${path} is a ${kind === 'file' ? 'file' : 'special file'}, not a folder`;
        if (!problems.includes(problem)) problems.push(problem);
        break;
      }
      if (last) {
        if (kind === 'file') existing.add(file);
        else if (kind === 'folder') problems.push(`${path} is a folder, not a file`);
        else problems.push(`${path} is not a regular file (a FIFO, socket or device)`);
      }
    }
  }
  if (problems.length > 0) {
    throw new ProjectWriteError(
      'init.unsafe_path',
      `${problems.join('; ')}. Nothing was written: init writes only inside its folder, never through a link or over what is not a plain file; remove or rename ${problems.length === 1 ? 'it' : 'them'}, or pick another folder.`,
      { paths: problems },
    );
  }
  return { root, existing, folders };
}

/**
 * The text of a plain file at `path`, read without following a link or blocking on a FIFO; null
 * when there is none.
 */
export async function readPlainFile(path: string): Promise<string | null> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw unsafe(path, error);
  }
  try {
    if (!(await handle.stat()).isFile()) {
      throw new ProjectWriteError('init.unsafe_path', `${path} is not a regular file; nothing was written`, {
        path,
      });
    }
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** Makes the plan's folders, each one level, refusing one that turned into something else. */
export async function makeFolders(plan: WritePlan): Promise<void> {
  await mkdir(plan.root, { recursive: true }).catch((error) => {
    throw writeFailed(plan.root, error);
  });
  for (const folder of plan.folders) {
    try {
      await mkdir(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || (await found(folder)).kind !== 'folder')
        throw unsafe(folder, error);
    }
  }
}

/**
 * Writes `content` at `root/file`: a new file with O_EXCL (no link is followed, nothing that
 * appeared meanwhile is overwritten), an existing one by a rename over it. The folder must still
 * be the one checked: its real path is `root`'s plus the relative folders.
 */
export async function writeProjectFile(
  plan: WritePlan,
  file: string,
  content: string,
  realRoot: string,
): Promise<void> {
  const path = join(plan.root, file);
  const folder = dirname(path);
  const expected = join(realRoot, dirname(file));
  const real = await realpath(folder).catch(() => undefined);
  if (real !== expected) {
    throw new ProjectWriteError(
      'init.unsafe_path',
      `${folder} changed while init ran (it now leads to ${real ?? 'nothing'}); stopped before writing ${file}`,
      { path: folder },
    );
  }
  if (plan.existing.has(file)) {
    const temp = join(folder, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
    await writeExclusive(temp, content);
    try {
      await rename(temp, path);
    } catch (error) {
      await unlink(temp).catch(() => {});
      throw writeFailed(path, error);
    }
    return;
  }
  await writeExclusive(path, content);
}

async function writeExclusive(path: string, content: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(
      path,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o644,
    );
  } catch (error) {
    throw (error as NodeJS.ErrnoException).code === 'EEXIST' ? unsafe(path, error) : writeFailed(path, error);
  }
  try {
    await handle.writeFile(content);
  } catch (error) {
    throw writeFailed(path, error);
  } finally {
    await handle.close();
  }
}

function unsafe(path: string, error: unknown): ProjectWriteError {
  return new ProjectWriteError(
    'init.unsafe_path',
    `${path} appeared or changed while init ran (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); stopped`,
    { path },
  );
}

function writeFailed(path: string, error: unknown): ProjectWriteError {
  return new ProjectWriteError('init.write', `cannot write ${path}: ${(error as Error).message}`, { path });
}
