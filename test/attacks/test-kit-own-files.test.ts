/**
 * The attack: a tool under a user's test (organism/testing) reaching what the daemon's file guard
 * keeps every tool off. The kit's guard registered only data_dir, organism.yaml and .env: a
 * read_file granted `/**` read the developer's audit key (~/.config/organism/audit.key, the key
 * that seals the daemon's audit records and approvals) and write_file planted a package in a
 * node_modules the project resolves from. The kit now registers what the daemon's runtime does.
 * Everything lives in temp folders: XDG_CONFIG_HOME points at one for the key.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type TestedListener, testListener } from '../../src/testing/index.ts';
import { call, caller } from '../testing/caller.ts';

let home: string;
const open: TestedListener[] = [];

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'organism-kit-home-'));
  vi.stubEnv('XDG_CONFIG_HOME', home);
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
  vi.unstubAllEnvs();
  await rm(home, { recursive: true, force: true });
});

/** A tested listener granted the file tools over every path. */
async function everywhere(): Promise<TestedListener> {
  const t = await testListener(caller, {
    name: 'support',
    tools: ['read_file', 'write_file'],
    config: {
      tool_config: { read_file: { allowed_paths: ['/**'] }, write_file: { allowed_paths: ['/**'] } },
    },
  });
  open.push(t);
  return t;
}

describe("the test kit keeps a tool off the organism's own files, as the daemon does", () => {
  it('read_file and write_file of the audit key (its default path) are refused, the key unchanged', async () => {
    const key = join(home, 'organism', 'audit.key');
    await mkdir(dirname(key), { recursive: true });
    await writeFile(key, 'k1:c2VjcmV0LWtleS1ieXRlcy1vZi10aGUtZGV2ZWxvcGVyLTAwMDA=\n');
    const t = await everywhere();
    for (const path of [key, join(home, 'organism', '..', 'organism', 'audit.key')]) {
      const read = await call(t, 'read_file', { path });
      expect(read).toMatchObject({ status: 'refused', error: { rule_id: 'file.daemon_data' } });
      expect(JSON.stringify(read)).not.toContain('c2VjcmV0');
      expect(await call(t, 'write_file', { path, content: 'k1:forged\n' })).toMatchObject({
        status: 'refused',
        error: { rule_id: 'file.daemon_data' },
      });
    }
    expect(readFileSync(key, 'utf8')).toContain('c2VjcmV0');
  });

  it('a checkpoint planted in the audit checkpoint folder is refused', async () => {
    const t = await everywhere();
    const planted = join(home, 'organism', 'checkpoints', 'planted.json');
    expect(await call(t, 'write_file', { path: planted, content: '{}' })).toMatchObject({
      status: 'refused',
      error: { rule_id: 'file.daemon_data' },
    });
    expect(existsSync(planted)).toBe(false);
  });

  it('write_file into a node_modules the project resolves from is refused (the daemon would load it)', async () => {
    const t = await everywhere();
    const project = dirname(t.config.file);
    for (const path of [
      join(project, 'node_modules', 'evil', 'index.js'),
      join(project, 'data', '..', 'node_modules', 'evil', 'package.json'),
    ]) {
      expect(await call(t, 'write_file', { path, content: 'process.exit(7)' })).toMatchObject({
        status: 'refused',
        error: { rule_id: 'file.organism_code' },
      });
    }
    expect(existsSync(join(project, 'node_modules'))).toBe(false);
  });
});
