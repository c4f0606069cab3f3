/**
 * Issues found after the file was read (a tool's grant, a tool_config key) name a key path only;
 * this gives each the line and column of that path, or of its nearest ancestor in the file, so
 * `validate`, a refused reload and `organism dev` print every issue as file:line:column.
 */
import { resolve } from 'node:path';
import type { ConfigIssue } from '../errors.ts';
import { parseConfigText, readConfigText } from './read.ts';

/**
 * `issues` with `file` as the user named it and, where an issue has no line yet, the position of
 * its key path in the file as it is now. Issues that have a line keep theirs.
 */
export async function positionIssues(issues: readonly ConfigIssue[], file: string): Promise<ConfigIssue[]> {
  if (issues.every((issue) => issue.line !== undefined)) return [...issues];
  const text = await readConfigText(resolve(file), file);
  const source = typeof text === 'string' ? parseConfigText(text, file).source : undefined;
  return issues.map((issue) => {
    if (issue.line !== undefined) return issue;
    const position = source?.position(keyPath(issue.path));
    return { ...issue, file, ...(position ?? {}) };
  });
}

/** `listeners[0].tools[1]` -> `['listeners', 0, 'tools', 1]`. */
function keyPath(path: string): (string | number)[] {
  return [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] === undefined ? m[1]! : Number(m[2])));
}
