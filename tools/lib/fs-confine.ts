/**
 * Containment by real path: the part of the workspace rules that does not depend on any guard
 * rule. A path is inside when its real location (symlinks resolved) is under the real workspace.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { FileToolError } from '../../src/errors.ts';
import { fsError } from './fs-errors.ts';

/** Lexical: `candidate` is `root` or below it (both absolute, already real where it matters). */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** A directory inside the workspace for run_command's cwd (the shell guard judges the command). */
export async function resolveWorkspaceDir(workspace: string, rel: string | undefined): Promise<string> {
  const workspaceReal = await realpath(workspace).catch((error) => {
    throw fsError(error, workspace, 'open the workspace');
  });
  if (rel === undefined || rel === '' || rel === '.') return workspaceReal;
  const lexical = path.resolve(workspaceReal, rel);
  const real = await realpath(lexical).catch((error) => {
    throw fsError(error, rel, 'use as working directory');
  });
  if (!isInside(workspaceReal, real)) {
    throw new FileToolError('file.path_refused', `${JSON.stringify(rel)} is outside the workspace`, {
      path: rel,
      rule_id: 'file.outside_workspace',
    });
  }
  return real;
}
