/**
 * The file guard's rule for the organism's own code (src/guard/organism-code.ts): a write to a
 * registered code file or into a tool_modules folder is refused whatever allowed_paths says, by
 * any spelling (`..`, other case, a symlink, a dangling one); a read is not; a source forgotten
 * (its runtime closed) protects nothing any more, while another source's files stay protected.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkPath } from '../../src/guard/file.ts';
import { organismCode } from '../../src/guard/organism-code.ts';
import { runtimeCodeFolders } from '../../src/tools/code-files.ts';

let root: string;
let ws: string;
const OLD = Symbol('old runtime');
const NEW = Symbol('new runtime');

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'organism-code-guard-')));
  ws = path.join(root, 'ws');
  await mkdir(ws);
  await mkdir(path.join(root, 'listeners'));
  await mkdir(path.join(root, 'tools'));
  await writeFile(path.join(root, 'listeners', 'greeter.ts'), 'x');
  await writeFile(path.join(root, 'listeners', 'other.ts'), 'x');
  await symlink(path.join(root, 'listeners', 'greeter.ts'), path.join(ws, 'link.ts'));
  // A dangling link to the tools folder's next module: writing it would create that module.
  await symlink(path.join(root, 'tools', 'new.ts'), path.join(ws, 'dangling.ts'));
});
afterEach(() => {
  organismCode.delete(OLD);
  organismCode.delete(NEW);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const judge = (p: string, access: 'read' | 'write') =>
  checkPath(p, access, { workspace: ws, trust: 'high', allowedPaths: [root, `${root}/**`] });

function register(source: symbol, files: string[]) {
  organismCode.set(source, {
    files: new Map(files.map((f) => [path.join(root, f), `the handler of ${f}`])),
    folders: new Map([[path.join(root, 'tools'), 'a tool_modules folder']]),
  });
}

describe('the organism code rule of the file guard', () => {
  it('refuses writes by every spelling, with the rule and what the file is', () => {
    register(OLD, ['listeners/greeter.ts']);
    for (const p of [
      path.join(root, 'listeners/greeter.ts'),
      '../listeners/greeter.ts',
      './../listeners/./../listeners/greeter.ts',
      '../LISTENERS/Greeter.TS',
      'link.ts',
      'dangling.ts',
      '../tools/answer.ts',
      '../tools/sub/deep.ts',
    ]) {
      const verdict = judge(p, 'write');
      expect(verdict.verdict, p).toBe('deny');
      expect(verdict.rule_id, p).toBe('file.organism_code');
      expect(verdict.reason, p).toMatch(
        /organism's own code \((the handler of listeners\/greeter.ts|a tool_modules folder)\)/,
      );
    }
  });

  it('lets the code be read, and other files of the project be written', () => {
    register(OLD, ['listeners/greeter.ts']);
    expect(judge('../listeners/greeter.ts', 'read').verdict).toBe('allow');
    expect(judge('../listeners/other.ts', 'write').verdict).toBe('allow');
    expect(judge('../tools-notes.md', 'write').verdict).toBe('allow');
  });

  it("protects both sources' files while both are set, and a forgotten source's no more", () => {
    register(OLD, ['listeners/greeter.ts']);
    register(NEW, ['listeners/other.ts']);
    expect(judge('../listeners/greeter.ts', 'write').rule_id).toBe('file.organism_code');
    expect(judge('../listeners/other.ts', 'write').rule_id).toBe('file.organism_code');
    organismCode.delete(OLD);
    expect(judge('../listeners/greeter.ts', 'write').verdict).toBe('allow');
    expect(judge('../listeners/other.ts', 'write').rule_id).toBe('file.organism_code');
  });

  it('refuses writes to the code a daemon loads at its next start: node_modules and the package', () => {
    // What each tool runtime registers beside the configuration's code (src/tools/runtime.ts).
    organismCode.set(OLD, { files: new Map(), folders: runtimeCodeFolders(root) });
    const anywhere = (p: string) =>
      checkPath(p, 'write', { workspace: ws, trust: 'high', allowedPaths: ['/**'] });
    const checkout = fileURLToPath(new URL('../..', import.meta.url));
    for (const p of [
      '../node_modules/words/index.js', // a dependency of the project's code
      '../node_modules/new-package/index.js', // one a tool would add
      '../NODE_MODULES/words/index.js',
      path.join(path.dirname(root), 'node_modules', 'x.js'), // Node resolves from every folder above
      path.join(checkout, 'dist', 'src', 'cli', 'main.js'), // the package's own, built
      path.join(checkout, 'src', 'daemon.ts'),
      path.join(checkout, 'bin', 'organism.js'),
      path.join(checkout, 'node_modules', 'yaml', 'dist', 'index.js'),
    ]) {
      const verdict = anywhere(p);
      expect(verdict.rule_id, p).toBe('file.organism_code');
    }
    // The rest of the project and the checkout's other files are not code.
    expect(anywhere('../notes/node_modules.md').verdict).toBe('allow');
    expect(anywhere('../listeners/other.ts').verdict).toBe('allow');
  });
});
