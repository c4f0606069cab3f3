/** Finds a program the way execvp would: a name with a `/` as given (relative to `cwd`), else on PATH. */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

export type ProgramLookup =
  | { found: true; path: string }
  | { found: false; reason: 'missing' | 'not_executable' };

function executable(path: string): boolean | undefined {
  try {
    if (!statSync(path).isFile()) return false;
  } catch {
    return undefined;
  }
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function findProgram(program: string, pathList: string, cwd: string): ProgramLookup {
  if (program.includes('/')) {
    const path = isAbsolute(program) ? program : resolve(cwd, program);
    const ok = executable(path);
    if (ok === undefined) return { found: false, reason: 'missing' };
    return ok ? { found: true, path } : { found: false, reason: 'not_executable' };
  }
  let sawFile = false;
  for (const dir of pathList.split(delimiter)) {
    if (dir === '') continue;
    const path = join(dir, program);
    const ok = executable(path);
    if (ok) return { found: true, path };
    if (ok === false) sawFile = true;
  }
  return { found: false, reason: sawFile ? 'not_executable' : 'missing' };
}
