import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dispatcher } from '../../src/tools/dispatcher.ts';
import type { ToolConfig } from '../../src/tools/types.ts';
import { fsError } from '../../tools/lib/fs-errors.ts';
import listDir from '../../tools/list-dir.ts';
import readFileTool from '../../tools/read-file.ts';
import writeFileTool from '../../tools/write-file.ts';
import { allowAll, makeContext, toolDispatcher } from './tool-helpers.ts';

let ws: string;
let outside: string;

const makeCtx = (config: ToolConfig = {}) => makeContext({ config, workspace: ws });

const read = (args: Record<string, unknown>, config: ToolConfig = {}) =>
  readFileTool.run(args as never, makeCtx(config));
const write = (args: Record<string, unknown>, config: ToolConfig = {}) =>
  writeFileTool.run(args as never, makeCtx(config));
const list = (args: Record<string, unknown>, config: ToolConfig = {}) =>
  listDir.run(args as never, makeCtx(config));

const isRoot = process.getuid?.() === 0;

beforeAll(async () => {
  ws = await mkdtemp(path.join(os.tmpdir(), 'organism-files-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'organism-outside-'));
  await writeFile(path.join(outside, 'secret.txt'), 'outside secret\n');
  await writeFile(path.join(ws, 'three.txt'), 'one\ntwo\nthree\n');
  await writeFile(path.join(ws, 'no-newline.txt'), 'a\nb');
  await writeFile(path.join(ws, 'empty.txt'), '');
  await writeFile(path.join(ws, 'blob.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff, 0x00]));
  await mkdir(path.join(ws, 'docs', 'deep'), { recursive: true });
  await writeFile(path.join(ws, 'docs', 'a.md'), '# A\n');
  await writeFile(path.join(ws, 'docs', 'deep', 'b.md'), '# B\n');
  await writeFile(path.join(ws, 'docs', 'deep', 'c.txt'), 'c\n');
  await symlink('/etc', path.join(ws, 'etc-link'));
  await symlink(path.join(outside, 'secret.txt'), path.join(ws, 'secret-link'));
  await symlink(path.join(outside, 'not-yet.txt'), path.join(ws, 'dangling-link'));
  await symlink('three.txt', path.join(ws, 'inner-link.txt'));
});

afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe('read_file', () => {
  it('reads a text file whole', async () => {
    expect(await read({ path: 'three.txt' })).toEqual({
      path: 'three.txt',
      content: 'one\ntwo\nthree\n',
      encoding: 'utf8',
      lines_returned: 3,
      total_lines: 3,
      truncated: false,
      size: 14,
    });
  });
  it('reads a window of lines with offset and limit, and says where to go on', async () => {
    const r = await read({ path: 'three.txt', offset: 1, limit: 1 });
    expect(r).toMatchObject({
      content: 'two\n',
      lines_returned: 1,
      total_lines: 3,
      next_offset: 2,
      truncated: false,
    });
  });
  it('counts a last line without a newline, and an empty file as 0 lines', async () => {
    expect(await read({ path: 'no-newline.txt', offset: 1 })).toMatchObject({ content: 'b', total_lines: 2 });
    expect(await read({ path: 'empty.txt' })).toMatchObject({
      content: '',
      lines_returned: 0,
      total_lines: 0,
    });
  });
  it('finds lines across read chunks in a large file', async () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => `line ${i} ${'x'.repeat(i % 17)}\n`);
    await writeFile(path.join(ws, 'big.txt'), lines.join(''));
    const r = await read({ path: 'big.txt', offset: 12_345, limit: 3 });
    expect(r.content).toBe(lines.slice(12_345, 12_348).join(''));
    expect(r.total_lines).toBe(30_000);
    expect(r.next_offset).toBe(12_348);
  });
  it('returns a binary file as base64 with a flag', async () => {
    const r = await read({ path: 'blob.bin' });
    expect(r.encoding).toBe('base64');
    expect(r.binary).toBe(true);
    expect(Buffer.from(r.content, 'base64')).toEqual(await readFile(path.join(ws, 'blob.bin')));
  });
  it('returns text as base64 when asked', async () => {
    const r = await read({ path: 'three.txt', encoding: 'base64' });
    expect(Buffer.from(r.content, 'base64').toString()).toBe('one\ntwo\nthree\n');
    expect(r.binary).toBeUndefined();
  });
  it('stops at max_bytes on a line boundary and says truncated', async () => {
    await writeFile(
      path.join(ws, 'hundred.txt'),
      Array.from({ length: 100 }, (_, i) => `${100 + i}-row\n`).join(''),
    );
    const r = await read({ path: 'hundred.txt' }, { max_bytes: 55 });
    expect(r.content).toBe('100-row\n101-row\n102-row\n103-row\n104-row\n105-row\n');
    expect(r).toMatchObject({ lines_returned: 6, truncated: true, next_offset: 6, total_lines: 100 });
  });
  it('cuts one over-long line without breaking a UTF-8 character', async () => {
    await writeFile(path.join(ws, 'accents.txt'), `${'é'.repeat(100)}\n`);
    const r = await read({ path: 'accents.txt' }, { max_bytes: 11 });
    expect(r.content).toBe('ééééé');
    expect(r.truncated).toBe(true);
  });
  it('refuses bad arguments with what was wrong', async () => {
    await expect(read({ path: 'three.txt', offset: -1 })).rejects.toMatchObject({
      code: 'file.bad_argument',
    });
    await expect(read({ path: 'three.txt', limit: 0 })).rejects.toMatchObject({ code: 'file.bad_argument' });
    await expect(read({ path: 'three.txt', encoding: 'latin1' })).rejects.toMatchObject({
      code: 'file.bad_argument',
    });
    await expect(read({ path: '' })).rejects.toMatchObject({ code: 'file.bad_argument' });
    await expect(read({ path: 'three.txt', offset: 10 })).rejects.toThrow('has 3 lines');
  });
  it('says not found, is a directory', async () => {
    await expect(read({ path: 'missing.txt' })).rejects.toMatchObject({ code: 'file.not_found' });
    await expect(read({ path: 'docs' })).rejects.toMatchObject({ code: 'file.is_directory' });
  });
  // Skipped as root (as CI runs): root reads a file whatever its mode, so the refusal cannot happen.
  // The mapping of EACCES itself is tested in the next test, which runs everywhere.
  it.skipIf(isRoot)('says permission denied', async () => {
    await writeFile(path.join(ws, 'locked.txt'), 'x');
    await chmod(path.join(ws, 'locked.txt'), 0o000);
    await expect(read({ path: 'locked.txt' })).rejects.toMatchObject({ code: 'file.permission_denied' });
  });
  it('maps EACCES to permission denied with the path', () => {
    const e = fsError(Object.assign(new Error('x'), { code: 'EACCES' }), 'a/b.txt', 'read');
    expect(e.code).toBe('file.permission_denied');
    expect(e.message).toBe('permission denied: cannot read "a/b.txt"');
  });
  it('follows a symlink that stays inside the workspace', async () => {
    expect((await read({ path: 'inner-link.txt' })).content).toBe('one\ntwo\nthree\n');
  });
  it('refuses paths outside the workspace: .., absolute, symlinks out', async () => {
    for (const p of [
      '../x.txt',
      'docs/../../x.txt',
      path.join(outside, 'secret.txt'),
      '/etc/passwd',
      'secret-link',
      'etc-link/passwd',
    ]) {
      const err = await read({ path: p }).catch((e) => e);
      expect(err.code, p).toBe('file.path_refused');
      expect(err.details.rule_id, p).toBeTruthy();
      expect(JSON.stringify(err)).not.toContain('outside secret');
    }
  });
  it('honours allowed_paths, by real path so a symlink cannot smuggle a file in', async () => {
    const config = { allowed_paths: ['docs/**'] };
    expect((await read({ path: 'docs/a.md' }, config)).content).toBe('# A\n');
    await expect(read({ path: 'three.txt' }, config)).rejects.toMatchObject({
      code: 'file.path_refused',
      details: { rule_id: 'file.allowed_paths' },
    });
    await symlink('../three.txt', path.join(ws, 'docs', 'sneaky.txt'));
    try {
      await expect(read({ path: 'docs/sneaky.txt' }, config)).rejects.toMatchObject({
        details: { rule_id: 'file.allowed_paths' },
      });
    } finally {
      await rm(path.join(ws, 'docs', 'sneaky.txt'));
    }
  });
  it("passes the file guard's refusal on with its rule", async () => {
    await writeFile(path.join(ws, '.env'), 'OPENAI_API_KEY=sk-test\n');
    const err = await read({ path: '.env' }).catch((e) => e);
    expect(err.code).toBe('file.path_refused');
    expect(err.details.rule_id).toBe('file.sensitive');
    expect(JSON.stringify(err)).not.toContain('sk-test');
    await expect(write({ path: '.git/config', content: 'x' })).rejects.toMatchObject({
      details: { rule_id: 'file.git_internals' },
    });
  });
});

describe('write_file', () => {
  it('creates a file and its parent folders', async () => {
    const r = await write({ path: 'out/new/deep/file.txt', content: 'héllo\n' });
    expect(r).toEqual({ path: 'out/new/deep/file.txt', bytes_written: 7, size: 7, created: true });
    expect(await readFile(path.join(ws, 'out/new/deep/file.txt'), 'utf8')).toBe('héllo\n');
  });
  it('overwrites, keeping the file mode, and leaves no temp file', async () => {
    const file = path.join(ws, 'out', 'mode.txt');
    await writeFile(file, 'old content');
    await chmod(file, 0o600);
    const r = await write({ path: 'out/mode.txt', content: 'new' });
    expect(r).toMatchObject({ bytes_written: 3, size: 3, created: false });
    expect(await readFile(file, 'utf8')).toBe('new');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readdir(path.join(ws, 'out'))).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
  it('appends, creating the file when missing', async () => {
    await write({ path: 'out/log.txt', content: 'a\n', mode: 'append' });
    const r = await write({ path: 'out/log.txt', content: 'b\n', mode: 'append' });
    expect(r).toMatchObject({ bytes_written: 2, size: 4, created: false });
    expect(await readFile(path.join(ws, 'out/log.txt'), 'utf8')).toBe('a\nb\n');
  });
  it('loses no append when many run at once', async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        write({ path: 'out/many.txt', content: `${i}\n`, mode: 'append' }),
      ),
    );
    const lines = (await readFile(path.join(ws, 'out/many.txt'), 'utf8')).trim().split('\n').map(Number);
    expect(lines.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });
  it('writes bytes from base64 and refuses invalid base64', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    await write({ path: 'out/bytes.bin', content: bytes.toString('base64'), encoding: 'base64' });
    expect(await readFile(path.join(ws, 'out/bytes.bin'))).toEqual(bytes);
    await expect(
      write({ path: 'out/x.bin', content: 'not base64!', encoding: 'base64' }),
    ).rejects.toMatchObject({
      code: 'file.bad_argument',
    });
  });
  it('refuses content over max_bytes, and an append that would grow past it', async () => {
    await expect(
      write({ path: 'out/big.txt', content: 'x'.repeat(11) }, { max_bytes: 10 }),
    ).rejects.toMatchObject({
      code: 'file.too_large',
    });
    await expect(stat(path.join(ws, 'out/big.txt'))).rejects.toThrow();
    await write({ path: 'out/grow.txt', content: 'x'.repeat(8) }, { max_bytes: 10 });
    await expect(
      write({ path: 'out/grow.txt', content: 'yyy', mode: 'append' }, { max_bytes: 10 }),
    ).rejects.toMatchObject({
      code: 'file.too_large',
    });
    expect(await readFile(path.join(ws, 'out/grow.txt'), 'utf8')).toBe('x'.repeat(8));
  });
  it('refuses bad arguments', async () => {
    await expect(write({ path: 'out/a.txt', content: 'x', mode: 'prepend' })).rejects.toMatchObject({
      code: 'file.bad_argument',
    });
    await expect(write({ path: 'out/a.txt', content: 42 })).rejects.toMatchObject({
      code: 'file.bad_argument',
    });
    await expect(write({ path: '.', content: 'x' })).rejects.toMatchObject({ code: 'file.is_directory' });
  });
  it('says is a directory, and not a directory when a parent is a file', async () => {
    await expect(write({ path: 'docs', content: 'x' })).rejects.toMatchObject({ code: 'file.is_directory' });
    const err = await write({ path: 'three.txt/inside.txt', content: 'x' }).catch((e) => e);
    expect(['file.not_directory', 'file.path_refused']).toContain(err.code);
  });
  it('refuses paths outside the workspace and writes nothing there', async () => {
    for (const p of [
      '../escape.txt',
      path.join(outside, 'abs.txt'),
      'etc-link/organism-test.txt',
      'dangling-link',
      'secret-link',
    ]) {
      const err = await write({ path: p, content: 'pwned' }).catch((e) => e);
      expect(err.code, p).toBe('file.path_refused');
    }
    expect((await readdir(outside)).sort()).toEqual(['secret.txt']);
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('outside secret\n');
    await expect(stat('/etc/organism-test.txt')).rejects.toThrow();
  });
  it('honours allowed_paths', async () => {
    const config = { allowed_paths: ['notes/**'] };
    expect((await write({ path: 'notes/ok.md', content: 'ok' }, config)).created).toBe(true);
    await expect(write({ path: 'other/no.md', content: 'no' }, config)).rejects.toMatchObject({
      code: 'file.path_refused',
    });
    await expect(stat(path.join(ws, 'other'))).rejects.toThrow();
  });
});

describe('list_dir', () => {
  it('lists a folder, sorted, with type, size and modified time', async () => {
    const r = await list({ path: 'docs' });
    expect(r.path).toBe('docs');
    expect(r.truncated).toBe(false);
    expect(r.entries.map((e) => [e.name, e.type])).toEqual([
      ['a.md', 'file'],
      ['deep', 'dir'],
    ]);
    const a = r.entries[0]!;
    expect(a.size).toBe(4);
    expect(new Date(a.modified).getTime()).toBe((await stat(path.join(ws, 'docs/a.md'))).mtime.getTime());
  });
  it('lists the workspace by default, symlinks as symlinks', async () => {
    const r = await list({});
    const byName = new Map(r.entries.map((e) => [e.name, e.type]));
    expect(byName.get('three.txt')).toBe('file');
    expect(byName.get('docs')).toBe('dir');
    expect(byName.get('etc-link')).toBe('symlink');
    expect(byName.get('dangling-link')).toBe('symlink');
  });
  it('walks the tree when recursive, without following symlinks', async () => {
    const r = await list({ recursive: true });
    const names = r.entries.map((e) => e.name);
    expect(names).toContain('docs/deep/b.md');
    expect(names).toContain('etc-link');
    expect(names.some((n) => n.startsWith('etc-link/'))).toBe(false);
  });
  it('filters by glob: a bare pattern by name at any depth, a path pattern by relative path', async () => {
    expect(
      (await list({ path: 'docs', recursive: true, pattern: '*.md' })).entries.map((e) => e.name),
    ).toEqual(['a.md', 'deep/b.md']);
    expect(
      (await list({ path: 'docs', recursive: true, pattern: 'deep/*.txt' })).entries.map((e) => e.name),
    ).toEqual(['deep/c.txt']);
  });
  it('stops at max_entries and says truncated; tool_config caps it', async () => {
    const r = await list({ recursive: true, max_entries: 2 });
    expect(r.entries).toHaveLength(2);
    expect(r.truncated).toBe(true);
    const capped = await list({ recursive: true, max_entries: 500 }, { max_entries: 3 });
    expect(capped.entries).toHaveLength(3);
    expect(capped.truncated).toBe(true);
  });
  it('says not a directory, not found', async () => {
    await expect(list({ path: 'three.txt' })).rejects.toMatchObject({ code: 'file.not_directory' });
    await expect(list({ path: 'nope' })).rejects.toMatchObject({ code: 'file.not_found' });
    await expect(list({ path: 'docs', max_entries: 0 })).rejects.toMatchObject({ code: 'file.bad_argument' });
  });
  it('refuses folders outside the workspace', async () => {
    for (const p of ['..', '/etc', 'etc-link', outside]) {
      await expect(list({ path: p })).rejects.toMatchObject({ code: 'file.path_refused' });
    }
  });
  it('honours allowed_paths', async () => {
    const config = { allowed_paths: ['docs/**'] };
    expect((await list({ path: 'docs/deep' }, config)).entries.map((e) => e.name)).toEqual(['b.md', 'c.txt']);
    await expect(list({ path: '.' }, config)).rejects.toMatchObject({ code: 'file.path_refused' });
  });
});

describe('file tools through the Dispatcher', () => {
  // The guard here allows everything, so the refusal below comes from the tools' own containment.
  function dispatcher() {
    return toolDispatcher({
      tools: [readFileTool, writeFileTool, listDir],
      listener: {
        name: 'scribe',
        tools: ['read_file', 'write_file', 'list_dir'],
        tool_config: { write_file: { allowed_paths: ['via/**'] }, read_file: { max_bytes: 4096 } },
        trust: 'medium',
      },
      workspace: ws,
      guard: allowAll,
    });
  }
  const call = (d: Dispatcher, tool: string, args: unknown) =>
    d.call({ tool, args, listener: 'scribe', thread: 't' });

  it('write_file, read_file and list_dir work end to end', async () => {
    const d = dispatcher();
    expect(
      await call(d, 'write_file', { path: 'via/d.txt', content: 'from the dispatcher\n' }),
    ).toMatchObject({
      status: 'ok',
      value: { path: 'via/d.txt', bytes_written: 20, created: true },
    });
    expect(await call(d, 'read_file', { path: 'via/d.txt' })).toMatchObject({
      status: 'ok',
      value: { content: 'from the dispatcher\n', lines_returned: 1 },
    });
    expect(await call(d, 'list_dir', { path: 'via' })).toMatchObject({
      status: 'ok',
      value: { entries: [{ name: 'd.txt', type: 'file', size: 20 }], truncated: false },
    });
  });
  it('refuses an escape even when the guard lets it through, and allowed_paths misses', async () => {
    const d = dispatcher();
    expect(await call(d, 'read_file', { path: 'secret-link' })).toMatchObject({
      status: 'refused',
      error: { code: 'file.path_refused' },
    });
    expect(await call(d, 'write_file', { path: 'elsewhere.txt', content: 'x' })).toMatchObject({
      status: 'refused',
      error: { code: 'file.path_refused' },
    });
  });
  it('rejects bad arguments before the tool runs', async () => {
    const r = await call(dispatcher(), 'read_file', { path: 'three.txt', offset: 'two' });
    expect(r).toMatchObject({ status: 'refused', error: { code: 'InvalidArguments' } });
  });
});
