/**
 * The organisms of examples/ as a user runs them: each organism.yaml passes `organism validate`
 * (the real CLI), and the triage organism on the real daemon prints, for its README's
 * `organism send --wait`, exactly the thread its README shows. The examples' own tests
 * (examples/<name>/test/) run in the suite too (vitest.config.ts includes them).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, REPO_ROOT, runCli, startDaemonProcess } from '../helpers/daemon.ts';

const EXAMPLES = join(REPO_ROOT, 'examples');
const names = readdirSync(EXAMPLES, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);

describe('examples/', () => {
  it('holds the triage and mcp-server organisms, each with a README and tests of its own', () => {
    for (const name of ['triage', 'mcp-server']) {
      expect(names).toContain(name);
      expect(readdirSync(join(EXAMPLES, name))).toEqual(
        expect.arrayContaining(['README.md', 'organism.yaml', 'test']),
      );
      expect(readdirSync(join(EXAMPLES, name, 'test')).some((f) => f.endsWith('.test.ts'))).toBe(true);
    }
  });

  it.each(names)('examples/%s/organism.yaml passes organism validate', async (name) => {
    const data = mkdtempSync(join(tmpdir(), `example-${name}-`));
    try {
      const { code, stdout, stderr } = await runCli(['validate', join(EXAMPLES, name, 'organism.yaml')], {
        ORGANISM_DATA_DIR: data,
      });
      expect(stderr).toBe('');
      expect(stdout).toMatch(/^ok: /);
      expect(code).toBe(0);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});

describe('examples/triage on the real daemon', () => {
  const config = join(EXAMPLES, 'triage', 'organism.yaml');
  const readme = readFileSync(join(EXAMPLES, 'triage', 'README.md'), 'utf8');
  let data: string;
  let daemon: DaemonProcess;

  beforeAll(async () => {
    data = mkdtempSync(join(tmpdir(), 'example-triage-'));
    daemon = await startDaemonProcess(['--config', config], { ORGANISM_DATA_DIR: data });
  }, 60_000);
  afterAll(async () => {
    await daemon?.stop();
    rmSync(data, { recursive: true, force: true });
  });

  it("the README's organism send prints the thread the README shows", async () => {
    // The README's command, as a user types it.
    const block = /```sh norun\n(npx organism send [^`]*)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const payload = /'(<ticket>.*<\/ticket>)'/.exec(block!)?.[1];
    expect(payload).toBeDefined();
    const command = block!
      .replace(`'${payload}'`, 'PAYLOAD')
      .replace(/\\\n/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    expect(command).toBe(
      'npx organism send --config examples/triage/organism.yaml --to triage --wait PAYLOAD',
    );
    const args = ['send', '--config', config, '--to', 'triage', '--wait', payload!];
    const { code, stdout, stderr } = await runCli(args, { ORGANISM_DATA_DIR: data });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const shown = /```text\n([^`]*)```/.exec(readme)?.[1]?.trim().split('\n');
    expect(shown).toHaveLength(6);
    // The first line of --wait's output is {"thread", "message"}; the thread follows it.
    const lines = stdout
      .trim()
      .split('\n')
      .filter((line) => / -> .* \[/.test(line));
    expect(lines).toEqual(shown);
  });

  it('--json waits for the routed reply', async () => {
    const { code, stdout } = await runCli(
      [
        'send',
        '--config',
        config,
        '--to',
        'triage',
        '--json',
        '<ticket><id>T-2</id><from>grace@example.com</from><subject>The export is stuck</subject></ticket>',
      ],
      { ORGANISM_DATA_DIR: data },
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      status: 'replied',
      reply: { tag: 'routed', payload: { ticket: 'T-2', team: 'support', priority: 'normal' } },
    });
  });
});
