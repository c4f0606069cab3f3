import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { captureIo } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { fixture } from './helpers.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

describe('organism validate', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'organism-validate-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('exits 0 and says ok for the shipped organism.yaml', async () => {
    const io = captureIo();
    const file = join(REPO, 'organism.yaml');
    expect(await main(['validate', file], io)).toBe(0);
    const count = (parse(readFileSync(file, 'utf8')) as { listeners: unknown[] }).listeners.length;
    expect(count).toBeGreaterThanOrEqual(3);
    expect(io.stdout).toEqual([`ok: ${file} (${count} listeners)`]);
    expect(io.stderr).toEqual([]);
  });

  it('takes the file from --config too', async () => {
    const io = captureIo();
    expect(await main(['validate', '--config', fixture('minimal.yaml')], io)).toBe(0);
    expect(io.stdout).toEqual([`ok: ${fixture('minimal.yaml')} (2 listeners)`]);
  });

  it('exits 1 printing every issue as file:line:column: path: message', async () => {
    const io = captureIo();
    const file = fixture('unknown-key.yaml');
    expect(await main(['validate', file], io)).toBe(1);
    expect(io.stdout).toEqual([]);
    expect(io.stderr).toEqual([
      `${file}:3:3: organism.log_levl: unknown key 'log_levl' — did you mean 'log_level'?`,
      `${file}:7:5: listeners[0].peer: unknown key 'peer' — did you mean 'peers'?`,
      expect.stringMatching(
        new RegExp(`^${file.replace(/[.]/g, '\\.')}:8:5: listeners\\[0\\]\\.colour: unknown key 'colour'`),
      ),
      `${file}: 3 problems found`,
    ]);
  });

  it('reports a YAML syntax error with its line', async () => {
    const io = captureIo();
    const file = await writeFileIn(dir, 'bad.yaml', 'organism:\n  name: x\n   listeners: [\n');
    expect(await main(['validate', file], io)).toBe(1);
    // The parser reads `x` and the over-indented line after it as one value, so it points at line 2.
    expect(io.stderr[0]).toBe(
      `${file}:2:9: YAML syntax error: Nested mappings are not allowed in compact mappings`,
    );
    expect(io.stderr.at(-1)).toBe(`${file}: 3 problems found`);
  });

  it('defaults to ./organism.yaml and says when it is missing', async () => {
    const io = captureIo();
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(await main(['validate'], io)).toBe(1);
    } finally {
      process.chdir(cwd);
    }
    expect(io.stderr).toEqual([
      './organism.yaml: cannot read config file: no such file',
      './organism.yaml: 1 problem found',
    ]);
  });

  it('prints help with --help and refuses unknown flags', async () => {
    const help = captureIo();
    expect(await main(['validate', '--help'], help)).toBe(0);
    expect(help.stdout[0]).toMatch(/^usage: organism validate \[file\] \[--config FILE\]/);
    const bad = captureIo();
    expect(await main(['validate', '--strict'], bad)).toBe(1);
    expect(bad.stderr[0]).toMatch(/^organism validate: Unknown option '--strict'/);
    const both = captureIo();
    expect(await main(['validate', 'a.yaml', '--config', 'b.yaml'], both)).toBe(1);
    expect(both.stderr[0]).toContain('either as an argument or with --config, not both');
  });
});

async function writeFileIn(dir: string, name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}
