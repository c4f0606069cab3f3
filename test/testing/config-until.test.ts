/** organism/testing: testConfig() gives what the loader gives; until() waits for an outcome. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { ConfigError, WaitTimeoutError } from '../../src/errors.ts';
import { testConfig, until } from '../../src/testing/index.ts';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('testConfig', () => {
  it('equals what loadConfig makes of the same organism.yaml: every schema default, paths resolved', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'organism-testconfig-'));
    dirs.push(dir);
    await writeFile(
      join(dir, 'organism.yaml'),
      [
        'organism: { name: shop }',
        'bus: { max_concurrent: 2 }',
        'limits: { handler_timeout_ms: 500 }',
        'listeners:',
        '  - { name: clerk, agent: true, description: Sells things. }',
      ].join('\n'),
    );
    const loaded = await loadConfig(join(dir, 'organism.yaml'), { env: {}, loadModules: false });
    const made = testConfig(
      {
        organism: { name: 'shop' },
        bus: { max_concurrent: 2 },
        limits: { handler_timeout_ms: 500 },
        listeners: [{ name: 'clerk', agent: true, description: 'Sells things.' }],
      },
      { dir },
    );
    expect(made).toEqual(loaded.config);
    // The defaults are the schema's: spot-check two the old hand-made test configs got wrong.
    expect(made.bus.drain_timeout_ms).toBe(10_000);
    expect(made.limits.max_history_per_thread).toBe(1000);
    expect(made.bus.group).toBe('shop');
  });

  it('allows no listeners (a test of a tool or a store) and keeps data under its own folder', () => {
    const a = testConfig();
    const b = testConfig();
    expect(a.listeners).toEqual([]);
    expect(a.organism.name).toBe('test');
    expect(a.organism.data_dir).not.toBe(b.organism.data_dir);
    expect(a.organism.workspace.startsWith(a.organism.data_dir)).toBe(true);
  });

  it('names every key the schema refuses', () => {
    let error: unknown;
    try {
      testConfig({ bus: { max_concurrent: 0 }, limits: { max_xml_dept: 3 } as never });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues.map((i) => `${i.path}: ${i.message}`).sort();
    expect(issues).toEqual([
      'bus.max_concurrent: must be >= 1; got the number 0',
      "limits.max_xml_dept: unknown key 'max_xml_dept' — did you mean 'max_xml_depth'?",
    ]);
  });
});

describe('until', () => {
  it('resolves with the first value that is there (0 counts; undefined, null and false do not)', async () => {
    let calls = 0;
    const values = [undefined, null, false, 0];
    const got = await until(() => values[calls++], { intervalMs: 1 });
    expect(got).toBe(0);
    expect(calls).toBe(4);
  });

  it('waits for async probes', async () => {
    let ready = false;
    setTimeout(() => {
      ready = true;
    }, 30);
    await expect(until(async () => ready && 'ready')).resolves.toBe('ready');
  });

  it('rejects with testing.timeout naming what it waited for', async () => {
    const error = await until(() => false, {
      what: 'the reply from greeter',
      timeoutMs: 30,
      intervalMs: 5,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as WaitTimeoutError).code).toBe('testing.timeout');
    expect((error as Error).message).toBe('timed out after 30 ms waiting for the reply from greeter');
  });

  it('fails at once when the probe throws', async () => {
    let calls = 0;
    await expect(
      until(() => {
        calls++;
        throw new Error('broken probe');
      }),
    ).rejects.toThrow('broken probe');
    expect(calls).toBe(1);
  });

  it("with errors: 'retry', takes a throwing probe as not yet, and names its last error on timeout", async () => {
    let calls = 0;
    const got = await until(
      () => {
        if (++calls < 3) throw new Error('connection refused');
        return 'up';
      },
      { errors: 'retry', intervalMs: 1 },
    );
    expect(got).toBe('up');
    const error = await until(
      () => {
        throw new Error('connection refused');
      },
      { what: 'the daemon', errors: 'retry', timeoutMs: 20, intervalMs: 5 },
    ).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      'timed out after 20 ms waiting for the daemon (the probe last threw: connection refused)',
    );
  });
});
