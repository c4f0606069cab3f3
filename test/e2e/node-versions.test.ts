/**
 * The CLI starts clean on the Node that runs the suite (CI runs it on Node 20 and on Node 24):
 * bin/organism.js sets V8 flags in-process, and a flag this Node's V8 does not know prints
 * `Error: unrecognized flag ...` on stderr at every start, whatever the command.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.ts';

describe(`the CLI on Node ${process.versions.node} (V8 ${process.versions.v8})`, () => {
  it('prints --help with nothing on stderr', async () => {
    const { code, stdout, stderr } = await runCli(['--help']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('usage: organism');
  });

  it('validates the default organism.yaml with nothing on stderr', async () => {
    const { code, stdout, stderr } = await runCli(['validate']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ok: /);
  });
});
