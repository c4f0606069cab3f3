/**
 * What `organism dev` watches and how it reports saves: the local imports of a module resolved as
 * esbuild and TypeScript resolve them, the watch set of an organism, and the folder watcher's
 * debounce over real files (writes in place, a rename over a file, files nobody watches).
 */
import { mkdir, mkdtemp, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { localImportClosure } from '../../src/dev/local-imports.ts';
import { addToWatchSet, emptyWatchSet } from '../../src/dev/watch-set.ts';
import { FolderWatcher } from '../../src/dev/watcher.ts';

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-dev-watch-'));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

describe('localImportClosure', () => {
  it('follows relative imports as TypeScript resolves them, and nothing else', async () => {
    const dir = await project({
      'listeners/a.ts': [
        "import { b } from '../lib/b.js';", // NodeNext: b.ts
        "export { c } from './c';", // no extension: c.ts
        "const d = await import('./d/index.js');", // d/index.ts
        "import 'node:fs';",
        "import x from 'some-package';",
        "import './missing.js';",
        '',
      ].join('\n'),
      'lib/b.ts': "import { e } from './e.mjs';\nexport const b = e;\n", // e.mts
      'listeners/c.ts': "const f = require('../lib/f.cjs');\n", // f.cts
      'listeners/d/index.ts': "import { a } from '../a.js';\n", // a cycle back to the entry
      'lib/e.mts': 'export const e = 1;\n',
      'lib/f.cts': 'module.exports = 1;\n',
      'node_modules/some-package/index.js': '',
    });
    expect(localImportClosure(join(dir, 'listeners/a.ts'))).toEqual(
      ['lib/b.ts', 'lib/e.mts', 'lib/f.cts', 'listeners/c.ts', 'listeners/d/index.ts'].map((f) =>
        join(dir, f),
      ),
    );
  });

  it('a plain .js import of a .js file stays that file; a file that does not parse still yields its imports', async () => {
    const dir = await project({
      'a.js': "import { b } from './b.js';\nexport default {{{ broken\n",
      'b.js': 'export const b = 1;\n',
      'b.ts': 'export const b = 2;\n',
    });
    expect(localImportClosure(join(dir, 'a.js'))).toEqual([join(dir, 'b.js')]);
  });
});

describe('addToWatchSet', () => {
  it('organism.yaml, the .env beside it, handlers, tool modules, scripts and their imports', async () => {
    const dir = await project({
      'listeners/greeter.ts': "import { w } from './words.js';\n",
      'listeners/words.ts': 'export const w = 1;\n',
      'tools/answer.ts': "import { h } from '../lib/help.js';\n",
      'lib/help.ts': 'export const h = 1;\n',
      'single/tool.js': '',
      'agent.script.yaml': '',
    });
    const set = await addToWatchSet(emptyWatchSet(), join(dir, 'organism.yaml'), {
      listeners: [
        { handler: join(dir, 'listeners/greeter.ts') },
        { llm: { script: join(dir, 'own.script.yaml') } },
      ] as never,
      tool_modules: [join(dir, 'tools'), join(dir, 'single/tool.js'), join(dir, 'not-yet.ts')],
      llm: { backends: [{ provider: 'scripted', script: join(dir, 'agent.script.yaml') }] } as never,
    });
    expect([...set.files].sort()).toEqual(
      [
        '.env',
        'agent.script.yaml',
        'lib/help.ts',
        'listeners/greeter.ts',
        'listeners/words.ts',
        'not-yet.ts',
        'organism.yaml',
        'own.script.yaml',
        'single/tool.js',
        'tools/answer.ts',
      ].map((f) => join(dir, f)),
    );
    expect([...set.moduleFolders]).toEqual([join(dir, 'tools')]);
  });
});

describe('addToWatchSet and the workspaces', () => {
  it('leaves out what lies in organism.workspace or an MCP server workspace: tools write there', async () => {
    // The project folder as the workspace: a listener's write_file or run_command could save a handler.
    const dir = await project({
      'listeners/greeter.ts': "import { w } from '../lib/words.js';\n",
      'lib/words.ts': 'export const w = 1;\n',
      'tools/t.ts': '',
      'mcp-space/helper.ts': '',
      'elsewhere/x.ts': "import '../mcp-space/helper.js';\n",
    });
    const set = await addToWatchSet(emptyWatchSet(), join(dir, 'app', 'organism.yaml'), {
      organism: { workspace: dir },
      listeners: [{ handler: join(dir, 'listeners/greeter.ts') }] as never,
      tool_modules: [join(dir, 'tools')],
      llm: { backends: [] } as never,
    });
    expect([...set.files]).toEqual([]);
    expect([...set.moduleFolders]).toEqual([]);
    expect([...set.unwatched.keys()].sort()).toEqual(
      ['app/.env', 'app/organism.yaml', 'lib/words.ts', 'listeners/greeter.ts', 'tools', 'tools/t.ts'].map(
        (f) => join(dir, f),
      ),
    );

    const mcp = await addToWatchSet(emptyWatchSet(), join(dir, 'organism.yaml'), {
      organism: { workspace: join(dir, '.organism', 'workspace') },
      mcp_servers: [{ workspace: join(dir, 'mcp-space') }],
      listeners: [{ handler: join(dir, 'elsewhere/x.ts') }] as never,
      tool_modules: [],
      llm: { backends: [] } as never,
    });
    expect(mcp.files.has(join(dir, 'elsewhere/x.ts'))).toBe(true);
    expect(mcp.files.has(join(dir, 'mcp-space/helper.ts'))).toBe(false);
    expect([...mcp.unwatched]).toEqual([[join(dir, 'mcp-space/helper.ts'), join(dir, 'mcp-space')]]);
  });
});

describe('FolderWatcher', () => {
  const watchers: FolderWatcher[] = [];
  afterEach(() => {
    for (const w of watchers.splice(0)) w.close();
  });

  function watcher(debounceMs = 80) {
    const saves: string[][] = [];
    const w = new FolderWatcher({ debounceMs, onSave: (files) => saves.push(files) });
    watchers.push(w);
    return { w, saves };
  }

  const settle = (ms = 400) => new Promise((r) => setTimeout(r, ms));

  it('reports a burst of saves once, after it settles; unwatched files are no save', async () => {
    const dir = await project({ 'a.ts': '', 'b.ts': '', 'notes.txt': '' });
    const { w, saves } = watcher();
    w.update({ files: new Set([join(dir, 'a.ts'), join(dir, 'b.ts')]), moduleFolders: new Set() });
    await writeFile(join(dir, 'notes.txt'), 'not watched');
    await settle();
    expect(saves).toEqual([]);
    for (let i = 0; i < 5; i++) await writeFile(join(dir, 'a.ts'), `// ${i}`);
    await writeFile(join(dir, 'b.ts'), '// b');
    await settle();
    expect(saves).toEqual([[join(dir, 'a.ts'), join(dir, 'b.ts')]]);
  });

  it('sees a save made by renaming a temporary file over the watched one, again and again', async () => {
    const dir = await project({ 'a.ts': '' });
    const { w, saves } = watcher();
    w.update({ files: new Set([join(dir, 'a.ts')]), moduleFolders: new Set() });
    for (let i = 0; i < 2; i++) {
      await writeFile(join(dir, '.a.ts.tmp'), `// ${i}`);
      await rename(join(dir, '.a.ts.tmp'), join(dir, 'a.ts'));
      await settle();
    }
    expect(saves).toEqual([[join(dir, 'a.ts')], [join(dir, 'a.ts')]]);
  });

  it('a module file added to a tool_modules folder is a save; a file of another kind there is not', async () => {
    const dir = await project({ 'tools/.keep': '' });
    const { w, saves } = watcher();
    w.update({ files: new Set(), moduleFolders: new Set([join(dir, 'tools')]) });
    await writeFile(join(dir, 'tools', 'README.md'), '# tools');
    await settle();
    expect(saves).toEqual([]);
    await writeFile(join(dir, 'tools', 'new-tool.ts'), 'export default {};');
    await settle();
    expect(saves).toEqual([[join(dir, 'tools', 'new-tool.ts')]]);
  });

  it('update() stops watching folders no longer needed; close() stops everything', async () => {
    const dir = await project({ 'one/a.ts': '', 'two/b.ts': '' });
    const { w, saves } = watcher();
    w.update({ files: new Set([join(dir, 'one/a.ts'), join(dir, 'two/b.ts')]), moduleFolders: new Set() });
    expect(w.folders()).toEqual([join(dir, 'one'), join(dir, 'two')]);
    w.update({ files: new Set([join(dir, 'two/b.ts')]), moduleFolders: new Set() });
    expect(w.folders()).toEqual([join(dir, 'two')]);
    await writeFile(join(dir, 'one/a.ts'), '// no longer watched');
    await settle();
    expect(saves).toEqual([]);
    w.close();
    await writeFile(join(dir, 'two/b.ts'), '// closed');
    await settle();
    expect(saves).toEqual([]);
  });
});
