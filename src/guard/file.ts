/**
 * The file guard: judges a path before read_file / list_dir / write_file touch it. The path is
 * normalised (`~`, relative to the workspace, `..`), its symlinks are resolved as far as the path
 * exists (a dangling link counts as its target, since a write would create that), and both the
 * written and the real location are checked: system and sensitive places, the organism's own
 * files (and, for a write, its code: organism-code.ts), `.git` internals, and
 * then the allowlist: `allowed_paths` when the tool_config gives it (the whole list, which may
 * name places outside the workspace and leave parts of it out), else the workspace.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import picomatch from 'picomatch';
import type { TrustLevel } from '../config/types.ts';
import { sensitive } from './credential-files.ts';
import { organismCode } from './organism-code.ts';
import { isInside, realOrSelf } from './path-forms.ts';
import { allow, deny, type Verdict } from './types.ts';

export type Access = 'read' | 'write';

export interface PathCheckInput {
  /** Absolute path of the workspace; relative paths are taken against it. */
  workspace: string;
  /**
   * Globs (picomatch) of the places this tool may use, replacing the workspace as the allowlist;
   * `~` and relative globs (against the workspace) are expanded. System, sensitive and .git rules
   * apply whatever they say.
   */
  allowedPaths?: string[];
  trust: TrustLevel;
}

export type PathVerdict = Verdict & { resolved?: string };

const inside = (p: string, folder: string) => {
  const rel = path.relative(folder, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/**
 * The organism's own files, which no file tool may read or write whatever the workspace (one set
 * to the project folder holds them): its data dir (audit log, stores, journal, signing key) except
 * the workspace when that lies inside it (the default), its audit checkpoint folder, its config
 * file and the files it names (the audit key among them). Registered by each tool runtime
 * (src/tools/own-files.ts says what) under its config's path.
 */
export interface DaemonFileSet {
  dataDirs: string[];
  checkpointDirs?: string[];
  files: string[];
}

export class DaemonFiles {
  readonly #sources = new Map<string, Required<DaemonFileSet>>();

  set(source: string, own: DaemonFileSet): void {
    const real = (list: string[]) => [
      ...new Set(list.flatMap((f) => [path.resolve(f), realOrSelf(path.resolve(f))])),
    ];
    this.#sources.set(source, {
      dataDirs: real(own.dataDirs),
      checkpointDirs: real(own.checkpointDirs ?? []),
      files: real(own.files),
    });
  }

  /** Forgets a source (a test kit's organism, once closed: its temp folder is gone). */
  delete(source: string): void {
    this.#sources.delete(source);
  }

  /** What `p` is of the organism's own, or undefined; `workspaces`: the workspace, as given and real. */
  holds(p: string, workspaces: readonly string[]): string | undefined {
    for (const { dataDirs, checkpointDirs, files } of this.#sources.values()) {
      if (files.includes(p)) return 'configuration or key file';
      if (checkpointDirs.some((dir) => inside(p, dir))) return 'audit checkpoint folder';
      for (const dir of dataDirs) {
        if (!inside(p, dir)) continue;
        // The workspace inside the data dir (the default, <data_dir>/workspace) is the workspace.
        if (workspaces.some((w) => inside(w, dir) && w !== dir && inside(p, w))) continue;
        return 'data dir';
      }
    }
    return undefined;
  }
}

export const daemonFiles = new DaemonFiles();

/** No access at all: kernel and device interfaces. */
const SYSTEM_ANY = /^\/(proc|sys|dev)(\/|$)/;
/** No writes: the operating system itself. */
const SYSTEM_WRITE = /^\/(etc|usr|boot|bin|sbin|lib|lib32|lib64|libx32|private\/etc|System)(\/|$)/;

export function checkPath(raw: string, access: Access, input: PathCheckInput): PathVerdict {
  if (typeof raw !== 'string' || raw.trim() === '') {
    return deny('file.invalid_path', 'The path is empty.', 'Give a path relative to the workspace.');
  }
  if (raw.includes('\0')) {
    return deny(
      'file.invalid_path',
      'The path contains a NUL byte.',
      'Remove control characters from the path.',
    );
  }
  const home = homedir();
  let expanded = raw;
  if (raw === '~' || raw.startsWith('~/')) expanded = path.join(home, raw.slice(1));
  else if (raw.startsWith('~')) {
    return deny(
      'file.invalid_path',
      `"${raw}": ~user paths are not supported.`,
      'Write the path out in full.',
    );
  }
  const workspace = path.resolve(input.workspace);
  const workspaceReal = realOrSelf(workspace);
  const lexical = path.resolve(workspace, expanded);
  let resolved: string;
  try {
    resolved = resolveReal(lexical);
  } catch {
    return deny(
      'file.invalid_path',
      'The path has a symbolic link loop.',
      'Use a path without looping links.',
    );
  }
  const result = (v: Verdict): PathVerdict => ({ ...v, resolved });
  const candidates = lexical === resolved ? [lexical] : [lexical, resolved];

  for (const p of candidates) {
    if (SYSTEM_ANY.test(p)) {
      return result(
        deny(
          'file.system_path',
          `${p} is a kernel or device interface.`,
          'Work with files inside the workspace.',
          p,
        ),
      );
    }
    if (access === 'write' && SYSTEM_WRITE.test(p)) {
      return result(
        deny(
          'file.system_write',
          `${p} is a system location; it may not be written.`,
          'Write inside the workspace.',
          p,
        ),
      );
    }
  }
  for (const p of candidates) {
    const secret = sensitive(p);
    if (secret) {
      return result(
        deny(
          'file.sensitive',
          `${p} holds credentials or login configuration (${secret}).`,
          'Leave credentials and shell configuration alone; ask an operator if a secret is needed.',
          p,
        ),
      );
    }
  }
  for (const p of candidates) {
    const own = daemonFiles.holds(p, [workspace, workspaceReal]);
    if (own) {
      return result(
        deny(
          'file.daemon_data',
          `${p} is the organism's own ${own}, not the workspace's.`,
          'Work with the files of the workspace; the audit log, stores, keys and config are the runtime’s.',
          p,
        ),
      );
    }
  }
  if (access === 'write') {
    for (const p of candidates) {
      const code = organismCode.holds(p);
      if (code) {
        return result(
          deny(
            'file.organism_code',
            `${p} is the organism's own code (${code}); file tools may read it, not write it.`,
            'Write elsewhere; the organism’s code is changed by a person, and loaded at the next reload or start.',
            p,
          ),
        );
      }
    }
  }
  for (const p of candidates) {
    const git = gitInternal(p);
    if (!git) continue;
    const segment = p;
    if (access === 'write' || git === 'config' || input.trust !== 'high') {
      return result(
        deny(
          'file.git_internals',
          `${p} is inside .git; git's own files (config, hooks, objects) are not for direct ${access}s.`,
          access === 'write'
            ? 'Change the repository through git commands.'
            : 'Use git log / git show / git status to inspect the repository.',
          segment,
        ),
      );
    }
    return result({
      verdict: 'warn',
      rule_id: 'file.git_internals',
      reason: `${p} is inside .git; reading git's internals directly is rarely what you want.`,
      suggestion: 'Use git log / git show / git status to inspect the repository.',
      segment,
    });
  }

  // allowed_paths, when given, is the whole allowlist (it may name places outside the workspace);
  // without it the workspace is. Either way the real path is what is judged.
  if (input.allowedPaths?.length) {
    if (allowedBy(input.allowedPaths, workspace, home, resolved)) return result(allow());
    return result(
      deny(
        'file.allowed_paths',
        `${resolved} matches none of allowed_paths (${input.allowedPaths.join(', ')}).`,
        'Use a path that allowed_paths allows, or ask an operator to widen them.',
        resolved,
      ),
    );
  }
  const insideLexical = isInside(workspace, lexical) || isInside(workspaceReal, lexical);
  const insideReal = isInside(workspaceReal, resolved) || isInside(workspace, resolved);
  if (insideLexical && insideReal) return result(allow());
  if (insideLexical) {
    return result(
      deny(
        'file.symlink_escape',
        `${raw} leads outside the workspace through a symbolic link (to ${resolved}).`,
        'Use a path whose real location is inside the workspace.',
        resolved,
      ),
    );
  }
  return result(
    deny(
      'file.outside_workspace',
      `${resolved} is outside the workspace.`,
      'Use a path inside the workspace, or add the location to this tool’s allowed_paths.',
      resolved,
    ),
  );
}

/** 'config' for .git/config, 'internal' for anything else in or at a `.git` directory, null otherwise. */
function gitInternal(p: string): 'config' | 'internal' | null {
  const parts = p.split('/');
  const i = parts.indexOf('.git');
  if (i < 0) return null;
  return parts[i + 1] === 'config' && parts.length === i + 2 ? 'config' : 'internal';
}

/**
 * The real path of `p`: realpath of the longest existing prefix, plus the rest. A dangling symlink
 * at the junction is followed to its target. Throws on a link loop.
 */
export function resolveReal(p: string, hops = 0): string {
  if (hops > 40) throw new Error('symbolic link loop');
  try {
    return realpathSync.native(p);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw error;
  }
  const rest: string[] = [];
  let dir = p;
  for (;;) {
    const parent = path.dirname(dir);
    if (parent === dir) return p;
    rest.unshift(path.basename(dir));
    dir = parent;
    let real: string;
    try {
      real = realpathSync.native(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw error;
      continue;
    }
    const first = path.join(real, rest[0]!);
    const st = lstatSync(first, { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) {
      const target = path.resolve(real, readlinkSync(first));
      return resolveReal(path.join(target, ...rest.slice(1)), hops + 1);
    }
    return path.join(real, ...rest);
  }
}

type Matcher = (p: string) => boolean;
const matcherCache = new Map<string, Matcher[]>();

/**
 * allowed_paths: each glob (with `~` and relative globs expanded) matches the real path, either as
 * written or with its literal base directory resolved (so `/data/**` works when /data is a link).
 */
function allowedBy(globs: string[] | undefined, workspace: string, home: string, resolved: string): boolean {
  if (!globs || globs.length === 0) return false;
  const key = `${workspace}\0${globs.join('\0')}`;
  let matchers = matcherCache.get(key);
  if (!matchers) {
    matchers = [];
    for (const g of globs) {
      if (typeof g !== 'string' || g === '') continue;
      let glob = g === '~' || g.startsWith('~/') ? path.join(home, g.slice(1)) : g;
      if (!path.isAbsolute(glob)) glob = path.join(workspace, glob);
      const forms = new Set([glob]);
      const scan = picomatch.scan(glob);
      if (scan.base) {
        const realBase = realOrSelf(scan.base);
        if (realBase !== scan.base) forms.add(scan.isGlob ? `${realBase}/${scan.glob}` : realBase);
      }
      for (const form of forms) matchers.push(picomatch(form, { dot: true }));
    }
    if (matcherCache.size > 256) matcherCache.clear();
    matcherCache.set(key, matchers);
  }
  return matchers.some((m) => m(resolved));
}
