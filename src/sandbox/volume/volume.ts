/**
 * A workspace with a size bound: its content lives in an ext4 image file of exactly that size,
 * loop-mounted on the workspace folder. Whatever writes there (a program in the sandbox, write_file
 * in the daemon) and however (write, fallocate, many files), past the bound it gets ENOSPC ("No
 * space left on device"), and the host disk gives the workspace at most the image's size.
 *
 * The mount belongs to the processes that use it: each holds the folder open while it runs, and
 * the last to let go unmounts it (a plain umount fails while another holds it, so a daemon and an
 * `organism tools call` beside it share one mount). A mount left by a killed process is found in
 * /proc/self/mountinfo and used again. The image keeps the content between runs: with no organism
 * process running, the folder is empty.
 */
import { constants, type Stats } from 'node:fs';
import {
  chmod,
  chown,
  link,
  lstat,
  mkdir,
  open,
  readdir,
  realpath,
  rm,
  rmdir,
  stat,
  truncate,
} from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SandboxError } from '../../errors.ts';
import { deviceOf, loopBackingFile, mountAt } from './mounts.ts';
import { system, volumeUnavailable } from './system.ts';

export interface VolumeOptions {
  /** The folder to bound; made when missing. */
  dir: string;
  /** The image file holding its content (made at first use, in a folder no program sees). */
  image: string;
  /** The bound: the image's size in bytes. */
  maxBytes: number;
  /** What the folder's setting is called, for messages (`organism.workspace_max_bytes`). */
  setting: string;
}

export type VolumeState =
  /** This process mounted it. */
  | 'mounted'
  /** It was mounted already (another organism process, or one that was killed). */
  | 'reused'
  /** The folder is the mount point of another file system, which bounds it; no image is used. */
  | 'foreign';

export interface Volume {
  /** The folder's real path. */
  readonly dir: string;
  readonly image: string;
  readonly state: VolumeState;
  /** Something the operator should know (a size change that waits for the next mount...), or null. */
  readonly note: string | null;
  /** `major:minor` of the file system on the folder. */
  readonly device: string;
  /** Lets go of the folder; unmounts it when no other process holds it. Idempotent. */
  release(): Promise<void>;
}

/** Folders of this process's volumes and their devices, for the sandbox's check before each program. */
const held = new Map<string, string>();

/** The device the folder `realDir` must be on, when this process holds a volume there. */
export function heldVolumeDevice(realDir: string): string | undefined {
  return held.get(realDir);
}

const MIB = 1024 * 1024;

function isOurs(realDir: string, realImage: string): boolean {
  const top = mountAt(realDir);
  return top !== undefined && loopBackingFile(top.device) === realImage;
}

/** A new image of `bytes` (sparse), its root owned like `like`; made beside and linked in, so it appears whole. */
async function createImage(image: string, bytes: number, like: Stats): Promise<void> {
  const tmp = `${image}.new-${process.pid}`;
  await rm(tmp, { force: true });
  const handle = await open(
    tmp,
    constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await handle.truncate(bytes);
  } finally {
    await handle.close();
  }
  try {
    await system('mkfs.ext4', [
      '-q',
      '-F',
      '-m',
      '0',
      '-L',
      'organism',
      '-E',
      `root_owner=${like.uid}:${like.gid}`,
      tmp,
    ]);
    await link(tmp, image).catch((error: NodeJS.ErrnoException) => {
      // Another process made it at the same moment: use theirs.
      if (error.code !== 'EEXIST') throw error;
    });
  } finally {
    await rm(tmp, { force: true });
  }
}

/** Grows or shrinks an unmounted image to `bytes`; shrinking fails when its content does not fit. */
async function resizeImage(image: string, from: number, bytes: number, setting: string): Promise<void> {
  // resize2fs wants a freshly checked file system; -p repairs only what is safe to repair (exit 1:
  // it did, such as making the lost+found that mounting removes again).
  await system('e2fsck', ['-f', '-p', image], [0, 1]);
  if (bytes > from) {
    await truncate(image, bytes);
    await system('resize2fs', [image]);
    return;
  }
  await system('resize2fs', [image, `${Math.floor(bytes / 1024)}K`]).catch((error: unknown) => {
    throw new SandboxError(
      'sandbox.volume',
      `cannot shrink ${image} to ${setting} (${bytes} bytes): its files take more than that; remove some or raise ${setting} (${(error as Error).message})`,
    );
  });
  await truncate(image, bytes);
}

async function mountImage(image: string, dir: string): Promise<void> {
  await system('mount', ['-t', 'ext4', '-o', 'loop,nosuid,nodev', image, dir]);
}

/**
 * What the folder holds before its volume is mounted on it (what it held before it had one, or
 * what was written there while no organism process had it mounted) goes into the image, mounted
 * aside for it, then out of the folder, so nothing is hidden under the mount: the image is where
 * the workspace's files are. Into an image that has files already, a file only replaces an older one.
 */
async function moveInto(
  image: string,
  dir: string,
  fresh: boolean,
  maxBytes: number,
  setting: string,
): Promise<number> {
  const entries = await readdir(dir);
  if (entries.length === 0) return 0;
  const aside = `${image}.fill`;
  await mkdir(aside, { recursive: true, mode: 0o700 });
  await mountImage(image, aside);
  try {
    const update = fresh ? [] : ['--update'];
    await system('cp', ['-a', '--reflink=never', ...update, '--', `${dir}/.`, `${aside}/`]).catch(
      (error: unknown) => {
        throw new SandboxError(
          'sandbox.volume',
          `the files in ${dir} do not fit in its volume of ${setting} (${maxBytes} bytes): remove some or raise the bound (${(error as Error).message})`,
        );
      },
    );
  } finally {
    await system('umount', [aside]).catch(() => {});
    await rmdir(aside).catch(() => {});
  }
  for (const entry of entries) await rm(join(dir, entry), { recursive: true, force: true });
  return entries.length;
}

export async function openVolume(options: VolumeOptions): Promise<Volume> {
  const { image, maxBytes, setting } = options;
  const why = volumeUnavailable();
  if (why) throw new SandboxError('sandbox.volume_unavailable', why);
  if (!Number.isInteger(maxBytes) || maxBytes < 16 * MIB) {
    throw new SandboxError(
      'sandbox.volume',
      `${setting} must be a whole number of bytes, at least 16 MiB (16777216)`,
    );
  }
  await mkdir(options.dir, { recursive: true });
  const dir = await realpath(options.dir);
  await mkdir(dirname(image), { recursive: true, mode: 0o700 });
  const imageStat = await lstat(image).catch(() => undefined);
  if (imageStat && !imageStat.isFile()) {
    throw new SandboxError('sandbox.volume', `${image}, the workspace's image file, is not a regular file`);
  }
  let state: VolumeState;
  let note: string | null = null;
  const top = mountAt(dir);
  let realImage = imageStat ? await realpath(image) : image;
  if (top && loopBackingFile(top.device) === realImage) {
    state = 'reused';
    if (imageStat && imageStat.size !== maxBytes) {
      note = `the workspace volume ${image} is mounted with ${imageStat.size} bytes; ${setting} (${maxBytes}) applies once it is unmounted (no organism process running)`;
    }
  } else if (top) {
    state = 'foreign';
    note = `${dir} is the mount point of ${top.source} (${top.fsType}): that file system bounds the workspace, and no volume of ${setting} is made`;
  } else {
    const like = await stat(dir);
    if (!imageStat) {
      await createImage(image, maxBytes, like);
      realImage = await realpath(image);
    } else if (imageStat.size !== maxBytes) {
      await resizeImage(image, imageStat.size, maxBytes, setting);
      note = `the workspace volume ${image} was resized from ${imageStat.size} to ${maxBytes} bytes (${setting})`;
    }
    const moved = await moveInto(image, dir, !imageStat, maxBytes, setting).catch(async (error: unknown) => {
      // A new image is made again next time; an old one keeps its files, and the folder its own.
      if (!imageStat) await rm(image, { force: true });
      throw error;
    });
    await mountImage(image, dir).catch((error: unknown) => {
      // Two processes mounting at once: the other one won, which is as good.
      if (!isOurs(dir, realImage)) throw error;
    });
    state = 'mounted';
    // No lost+found in the workspace, unless a check put files there.
    await rmdir(join(dir, 'lost+found')).catch(() => {});
    if (!imageStat) {
      // A fresh file system: the folder's owner and mode kept.
      await chown(dir, like.uid, like.gid);
      await chmod(dir, like.mode & 0o7777);
    }
    if (moved > 0) note = `moved ${moved} entries of ${dir} into its size-bounded volume ${image}`;
  }
  // Held open while this process runs: another process's plain umount then fails, so the last one
  // to let go is the one that unmounts.
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  const device = deviceOf((await handle.stat()).dev);
  if (state !== 'foreign' && device !== mountAt(dir)?.device) {
    await handle.close();
    throw new SandboxError('sandbox.volume', `${dir} is not on its volume ${image} after mounting it`);
  }
  held.set(dir, device);
  let released = false;
  return {
    dir,
    image,
    state,
    note,
    device,
    async release() {
      if (released) return;
      released = true;
      held.delete(dir);
      await handle.close().catch(() => {});
      if (state === 'foreign') return;
      // Busy: another process holds it (it stays for them), or a program of ours is still dying
      // (worth a second try when this process mounted it; a mount found in use, once is enough).
      const attempts = state === 'mounted' ? 3 : 1;
      for (let attempt = 0; attempt < attempts && isOurs(dir, realImage); attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
        await system('umount', [dir]).catch(() => {});
      }
    },
  };
}
