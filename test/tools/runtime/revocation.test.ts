/** Revocation: kept in a file, honoured after a restart, picked up by a running runtime. */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureIo } from '../../../src/cli/io.ts';
import { main } from '../../../src/cli/main.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { until } from '../../../src/testing/index.ts';
import { createToolRuntime, type ToolRuntime } from '../../../src/tools/runtime.ts';
import { tableGuard } from './helpers.ts';
import { type TempOrganism, tempOrganism, toolModule } from './organism.ts';

async function organism(): Promise<TempOrganism> {
  return tempOrganism({
    tools: { 'noop.ts': toolModule('noop'), 'other.ts': toolModule('other') },
    researcherTools: ['noop', 'other'],
  });
}

async function cli(o: TempOrganism, ...args: string[]) {
  const io = captureIo();
  const code = await main(['tools', ...args, '--config', o.config, '--root', o.root], io);
  return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
}

async function start(o: TempOrganism, warnings: string[] = []): Promise<ToolRuntime> {
  return createToolRuntime(await loadConfig(o.config, { loadModules: false }), {
    root: o.root,
    guard: tableGuard(),
    warn: (m) => warnings.push(m),
    revocationPollMs: 20,
  });
}

function call(runtime: ToolRuntime, tool = 'noop') {
  return runtime.dispatcher.call({ tool, args: {}, listener: 'researcher', thread: `t-${Math.random()}` });
}

describe('revocation', () => {
  it('a revoked tool is refused with its reason, also after a restart, until unrevoked', async () => {
    const o = await organism();
    const revoked = await cli(o, 'revoke', 'noop', '--reason', 'sends data to the wrong host (INC-42)');
    expect(revoked.code).toBe(0);
    expect(revoked.out).toContain('revoked noop: sends data to the wrong host (INC-42)');
    const file = JSON.parse(await readFile(join(o.dataDir, 'revocations.json'), 'utf8'));
    expect(file.revoked.noop.reason).toBe('sends data to the wrong host (INC-42)');

    for (let restart = 0; restart < 2; restart++) {
      const runtime = await start(o);
      expect(await call(runtime)).toEqual({
        status: 'refused',
        tool: 'noop',
        error: {
          code: 'ToolRevoked',
          message: 'tool noop is revoked: sends data to the wrong host (INC-42)',
        },
      });
      expect((await call(runtime, 'other')).status).toBe('ok');
      await runtime.close();
    }

    expect((await cli(o, 'unrevoke', 'noop')).out).toContain('unrevoked noop');
    expect((await cli(o, 'unrevoke', 'noop')).out).toContain('noop was not revoked');
    const runtime = await start(o);
    expect((await call(runtime)).status).toBe('ok');
    await runtime.close();
  });

  it('a running runtime picks up revoke and unrevoke from the file (short poll interval)', async () => {
    const o = await organism();
    const runtime = await start(o);
    expect((await call(runtime)).status).toBe('ok');
    expect((await cli(o, 'revoke', 'noop', '--reason', 'paused by ops')).code).toBe(0);
    const refused = await until(async () => {
      const r = await call(runtime);
      return r.status === 'refused' && r;
    }, 'the revocation to take effect');
    expect(refused).toMatchObject({
      status: 'refused',
      error: { code: 'ToolRevoked', message: 'tool noop is revoked: paused by ops' },
    });
    expect(runtime.dispatcher.availability('researcher')[0]).toMatchObject({
      tool: 'noop',
      reason: 'revoked: paused by ops',
    });
    expect((await cli(o, 'unrevoke', 'noop')).code).toBe(0);
    const allowed = await until(async () => {
      const r = await call(runtime);
      return r.status === 'ok' && r;
    }, 'the unrevoke to take effect');
    expect(allowed.status).toBe('ok');
    await runtime.close();
  });

  it('a broken file mid-run keeps the last good revocations and says so', async () => {
    const o = await organism();
    await cli(o, 'revoke', 'noop', '--reason', 'bad');
    const warnings: string[] = [];
    const runtime = await start(o, warnings);
    await writeFile(join(o.dataDir, 'revocations.json'), '{ "revoked": ');
    await until(() => warnings.some((w) => w.includes('revocations')), 'the warning about the broken file');
    expect(warnings.join('\n')).toContain('is not valid JSON');
    expect(warnings.join('\n')).toContain('keeping the previous revocations');
    expect((await call(runtime)).status).toBe('refused');
    await runtime.close();
    // At start a broken file is an error rather than a silent un-revoke.
    await expect(start(o)).rejects.toThrow(/revocations file .* is not valid JSON/);
  });

  it('revoke needs a reason and a known tool', async () => {
    const o = await organism();
    const noReason = await cli(o, 'revoke', 'noop');
    expect(noReason.code).toBe(1);
    expect(noReason.err).toContain('tools revoke needs --reason');
    const unknown = await cli(o, 'revoke', 'nop', '--reason', 'x');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("no tool named 'nop' (did you mean noop?)");
  });
});
