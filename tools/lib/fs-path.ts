/**
 * Where a file tool may act. The file guard (src/guard/file.ts) judges each path first, with the
 * listener's allowed_paths and trust; then, as a second line of defence that does not depend on the
 * guard's rules, the real path (symlinks resolved) must lie inside the real workspace. Tools act on
 * the path returned here, never on the raw argument, and once they have opened it they `confirm()`
 * the real path of the descriptor they hold (fs-fd.ts), since a folder on the way may have been
 * swapped for a symbolic link after this check.
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import type { TrustLevel } from '../../src/config/types.ts';
import { FileToolError } from '../../src/errors.ts';
import { checkPath } from '../../src/guard/file.ts';
import type { ToolRunContext } from '../../src/tools/types.ts';
import { isInside } from './fs-confine.ts';
import { fsError } from './fs-errors.ts';

export type Access = 'read' | 'write';

/** tool_config.allowed_paths as a string list; throws file.bad_argument for anything else. */
export function allowedPathsOf(config: Record<string, unknown>): string[] | undefined {
  const value = config.allowed_paths;
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v === '')) {
    throw new FileToolError('file.bad_argument', 'tool_config.allowed_paths must be a list of path globs');
  }
  return value as string[];
}

const matchers = new Map<string, picomatch.Matcher>();

/**
 * allowed_paths narrows what a listener may touch inside the workspace: the real path (so a
 * symlink cannot smuggle another file in) must match a glob. Relative globs are taken against the
 * workspace, so "docs/**" allows "docs" itself and everything under it.
 */
export function matchesAllowed(globs: readonly string[], workspaceReal: string, real: string): boolean {
  const rel = path.relative(workspaceReal, real) || '.';
  return globs.some((glob) => {
    let m = matchers.get(glob);
    if (!m) {
      if (matchers.size > 256) matchers.clear();
      m = picomatch(glob, { dot: true });
      matchers.set(glob, m);
    }
    return path.isAbsolute(glob) ? m(real) : m(rel);
  });
}

/**
 * The real path of `candidate` as far as it exists, plus the part that does not exist yet. A
 * symlink anywhere in the existing part is resolved, so the containment check sees where the path
 * really leads.
 */
async function realpathPartial(candidate: string): Promise<{ real: string; missing: string[] }> {
  const missing: string[] = [];
  let current = candidate;
  let hops = 0;
  for (;;) {
    try {
      const real = await realpath(current);
      return { real: missing.length ? path.join(real, ...[...missing].reverse()) : real, missing };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') throw error;
      // A dangling symlink: what matters is where it points, since a write would create that.
      const st = await lstat(current).catch(() => undefined);
      if (st?.isSymbolicLink()) {
        if (++hops > 40) throw Object.assign(new Error('too many symbolic links'), { code: 'ELOOP' });
        current = path.resolve(path.dirname(current), await readlink(current));
        continue;
      }
      const parent = path.dirname(current);
      if (parent === current) return { real: candidate, missing };
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

export interface ResolvedPath {
  /** Absolute real path to act on (symlinks in the existing part resolved). */
  real: string;
  /** The path as the caller wrote it, for messages. */
  shown: string;
  /** Normalised, relative to the workspace (`.` for the workspace itself), for results. */
  relative: string;
  /** True when every component exists. */
  exists: boolean;
  /** The trailing components of `real` that did not exist when it was resolved, in order. */
  missing: string[];
  /** A guard warning, passed on in the result so the agent sees it. */
  warning?: string;
  /**
   * Checks `real`, the real location of what the tool actually opened (or is about to create in an
   * opened folder), against the same rules as the path: the workspace or allowed_paths, and any
   * deny of the file guard (a swapped folder could lead to `.git` or a credential folder inside
   * the workspace). Throws file.path_refused when it fails.
   */
  confirm(real: string): void;
}

export function refused(
  shown: string,
  rule: string,
  reason: string,
  suggestion: string | null,
): FileToolError {
  return new FileToolError('file.path_refused', `${JSON.stringify(shown)} refused: ${reason}`, {
    path: shown,
    rule_id: rule,
    ...(suggestion ? { suggestion } : {}),
  });
}

/**
 * Judges `raw` with the file guard, then, whatever the guard's rules say, confines its real path:
 * to allowed_paths when the listener has them (they are the whole allowlist and may name places
 * outside the workspace), else to the workspace.
 */
export async function resolveToolPath(
  raw: string,
  access: Access,
  ctx: ToolRunContext,
): Promise<ResolvedPath> {
  if (typeof raw !== 'string' || raw.trim() === '') {
    throw new FileToolError('file.bad_argument', 'path is empty: give a path relative to the workspace');
  }
  if (raw.includes('\0')) throw new FileToolError('file.bad_argument', 'path contains a NUL byte');
  const trust: TrustLevel = ctx.trust ?? 'medium';
  const allowedPaths = allowedPathsOf(ctx.config);
  /** The file guard's verdict on `p`; a deny is thrown as file.path_refused for the raw path. */
  const judge = (p: string) => {
    const verdict = checkPath(p, access, {
      workspace: ctx.workspace,
      trust,
      ...(allowedPaths ? { allowedPaths } : {}),
    });
    if (verdict.verdict === 'deny') {
      throw refused(
        raw,
        verdict.rule_id ?? 'file.denied',
        verdict.reason ?? 'the file guard denied it',
        verdict.suggestion,
      );
    }
    return verdict;
  };
  const verdict = judge(raw);
  const workspaceReal = await realpath(ctx.workspace).catch((error) => {
    throw fsError(error, ctx.workspace, 'open the workspace');
  });
  const lexical = path.resolve(ctx.workspace, raw);
  const wsLexical = path.resolve(ctx.workspace);
  const { real, missing } = await realpathPartial(lexical).catch((error) => {
    throw fsError(error, raw, 'resolve');
  });
  if (allowedPaths) {
    // allowed_paths is the whole allowlist: it may name places outside the workspace, and inside
    // the workspace only what it matches is usable. The real path must match, so a symlink cannot
    // lead anywhere else.
    if (!matchesAllowed(allowedPaths, workspaceReal, real)) {
      throw refused(
        raw,
        'file.allowed_paths',
        `this listener may use only ${allowedPaths.map((g) => JSON.stringify(g)).join(', ')} (allowed_paths)`,
        'use a path matching allowed_paths, or ask an operator to widen them',
      );
    }
  } else {
    const inside = (p: string) => isInside(wsLexical, p) || isInside(workspaceReal, p);
    // Both where the caller pointed and where the guard says that leads (it expands `~`) must be inside.
    if (!inside(lexical) || (verdict.resolved !== undefined && !inside(verdict.resolved))) {
      throw refused(
        raw,
        'file.outside_workspace',
        'the path is outside the workspace',
        'use a path inside the workspace',
      );
    }
    if (!isInside(workspaceReal, real)) {
      throw refused(
        raw,
        'file.symlink_escape',
        'it leads outside the workspace through a symbolic link',
        'use a path whose real location is inside the workspace',
      );
    }
  }
  const base = isInside(wsLexical, lexical) ? wsLexical : workspaceReal;
  const relative = path.relative(base, lexical) || '.';
  const confirm = (opened: string): void => {
    if (
      allowedPaths ? !matchesAllowed(allowedPaths, workspaceReal, opened) : !isInside(workspaceReal, opened)
    ) {
      throw refused(
        raw,
        'file.symlink_escape',
        `what was opened is really ${allowedPaths ? 'outside allowed_paths' : 'outside the workspace'} ` +
          '(a folder on the way was replaced by a symbolic link after the path was checked)',
        'use a path whose real location does not change while the tool works',
      );
    }
    judge(opened);
  };
  const result: ResolvedPath = {
    real,
    shown: raw,
    relative,
    exists: missing.length === 0,
    missing: [...missing].reverse(),
    confirm,
  };
  if (verdict.verdict === 'warn' && verdict.reason) result.warning = verdict.reason;
  return result;
}
