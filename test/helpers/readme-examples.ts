/**
 * The examples README.md marks as tests (`<!-- readme-example: test/x.test.ts -->` before a ```ts
 * block): each is run as written, so no example in the README can go stale unnoticed.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ReadmeExample {
  /** Where the example says it lives in a project (`test/triage.test.ts`). */
  file: string;
  code: string;
}

const MARKED = /<!-- readme-example: (\S+) -->\n```ts\n([\s\S]*?)\n```/g;

export async function readmeExamples(readme = join(REPO_ROOT, 'README.md')): Promise<ReadmeExample[]> {
  const text = await readFile(readme, 'utf8');
  return [...text.matchAll(MARKED)].map((m) => ({ file: m[1]!, code: `${m[2]!}\n` }));
}
