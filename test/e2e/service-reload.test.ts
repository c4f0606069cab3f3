/**
 * Hot reload of the real daemon while traffic flows: valid files (through the API and SIGHUP) add,
 * remove and replace listeners; invalid ones are refused with their errors and change nothing; no
 * message is lost either way, and each structural change leaves an audit record.
 */
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  call,
  chainYaml,
  FIXTURES,
  NAPPER_YAML,
  organismDir,
  startOn,
  TOKENS_ENV,
  until,
} from '../server/helpers.ts';

const header = `organism:\n  name: reload-test\n  log_level: info\n${AUTH_YAML}listeners:\n`;
const V1 = `${header}${chainYaml()}${NAPPER_YAML}`;
// shouter replaced by its V2 module, napper removed, napper2 added.
const V2 = `${header}${chainYaml({ shouter: `${FIXTURES}shouter-v2.ts` })}  - name: napper2
    handler: ${FIXTURES}napper.ts
`;
// Back to V1's shouter, with a new description only: a config change replaces it too.
const V3 = `${header}${chainYaml({ shouterDescription: 'Shouts, third edition.' })}  - name: napper2
    handler: ${FIXTURES}napper.ts
`;
const INVALID = `${header}${chainYaml()}  - name: broken
    handler: ${FIXTURES}does-not-exist.ts
    colour: blue
`;

let daemon: DaemonProcess;
let file: string;

const api = (path: string, options: Parameters<typeof call>[2] = {}) =>
  call(daemon.url, path, { token: ADMIN_TOKEN, ...options });

beforeAll(async () => {
  ({ file } = await organismDir(V1));
  daemon = await startOn(file, TOKENS_ENV);
});
afterAll(async () => {
  await daemon?.stop();
});

/** Injects greetings one after another until stopped; every accepted thread id is kept. */
function traffic() {
  const threads: string[] = [];
  let running = true;
  const done = (async () => {
    let i = 0;
    while (running) {
      const res = await api('/api/v1/inject', {
        body: { to: 'greeter', payload: `<greeting><name>n${i++}</name></greeting>` },
      });
      if (res.status === 202) threads.push(res.json.thread);
      else throw new Error(`inject answered ${res.status}: ${res.text}`);
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  return {
    threads,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

describe('hot reload under traffic', () => {
  it('applies valid files, refuses invalid ones, and loses no message', async () => {
    // A nap in flight on the listener the next reload removes: it must still finish.
    const nap = (await api('/api/v1/inject', { body: { to: 'napper', payload: '<nap><ms>1500</ms></nap>' } }))
      .json.thread as string;
    const load = traffic();
    await until(() => (load.threads.length > 20 ? true : undefined));

    await writeFile(file, V2);
    const applied = await api('/api/v1/organism/reload', { method: 'POST' });
    expect(applied.status, applied.text).toBe(200);
    expect(applied.json).toMatchObject({
      status: 'reloaded',
      by: 'root',
      added: ['napper2'],
      removed: ['napper'],
      replaced: ['shouter'],
      unchanged: ['greeter', 'printer'],
      restart_required: [],
    });
    const names = (await api('/api/v1/listeners')).json.listeners.map((l: { name: string }) => l.name);
    expect(names).toEqual(['greeter', 'shouter', 'printer', 'napper2']);
    const afterV2 = load.threads.length;
    await until(() => (load.threads.length > afterV2 + 20 ? true : undefined));

    await writeFile(file, INVALID);
    const refused = await api('/api/v1/organism/reload', { method: 'POST' });
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe('config.invalid');
    const problems = refused.json.error.issues.map((i: { path: string; message: string; line: number }) => i);
    expect(
      problems.some((i: { path: string; line: number }) => i.path === 'listeners[3].colour' && i.line > 0),
    ).toBe(true);
    expect(problems.some((i: { message: string }) => /does-not-exist\.ts/.test(i.message))).toBe(true);
    // Untouched: the listeners of V2 still run.
    const still = (await api('/api/v1/listeners')).json.listeners.map((l: { name: string }) => l.name);
    expect(still).toEqual(['greeter', 'shouter', 'printer', 'napper2']);
    const afterInvalid = load.threads.length;
    await until(() => (load.threads.length > afterInvalid + 20 ? true : undefined));

    // The same through SIGHUP: a valid file, then an invalid one.
    await writeFile(file, V3);
    daemon.child.kill('SIGHUP');
    await until(async () => ((await api('/api/v1/organism')).json.reloads.applied === 2 ? true : undefined));
    expect((await api('/api/v1/listeners/shouter')).json.description).toBe('Shouts, third edition.');
    await writeFile(file, INVALID);
    daemon.child.kill('SIGHUP');
    await until(async () => ((await api('/api/v1/organism')).json.reloads.refused === 2 ? true : undefined));
    expect(daemon.child.exitCode).toBeNull();
    const afterSighup = load.threads.length;
    await until(() => (load.threads.length > afterSighup + 20 ? true : undefined));
    await load.stop();

    // Every thread went greeter -> shouter -> printer, whichever shouter it met.
    const outcomes = new Set<string>();
    for (const thread of load.threads) {
      const view = await until(async () => {
        const v = (await api(`/api/v1/threads/${thread}`)).json;
        return v.status === 'idle' && v.messages.length === 3 ? v : undefined;
      });
      expect(view.messages.map((m: { to: string }) => m.to)).toEqual(['greeter', 'shouter', 'printer']);
      outcomes.add(view.messages[2].payload.includes('<text>V2 ') ? 'v2' : 'v1');
    }
    expect(outcomes).toEqual(new Set(['v1', 'v2']));
    expect(load.threads.length).toBeGreaterThan(80);

    // The removed napper finished the nap it had accepted.
    const napView = await until(async () => {
      const v = (await api(`/api/v1/threads/${nap}`)).json;
      return v.status === 'idle' ? v : undefined;
    });
    expect(napView.messages).toHaveLength(1);
    await until(() => (daemon.stdout().includes('nap over') ? true : undefined));
    const napLine = daemon
      .stdout()
      .split('\n')
      .find((l) => l.includes('nap over'))!;
    expect(JSON.parse(napLine)).toMatchObject({ thread: nap, listener: 'napper' });

    // One audit record per structural change, and one per reload, applied or refused.
    const changes = (await api('/api/v1/audit?type=change&limit=50')).json.records.reverse();
    expect(
      changes.map((r: { action: string; listener: string | null; by: string }) => [
        r.action,
        r.listener,
        r.by,
      ]),
    ).toEqual([
      ['listener.added', 'napper2', 'root'],
      ['listener.removed', 'napper', 'root'],
      ['listener.replaced', 'shouter', 'root'],
      ['organism.reloaded', null, 'root'],
      ['organism.reload_refused', null, 'root'],
      ['listener.replaced', 'shouter', 'sighup'],
      ['organism.reloaded', null, 'sighup'],
      ['organism.reload_refused', null, 'sighup'],
    ]);
    const metrics = (await api('/metrics')).text;
    expect(metrics).toContain('organism_reloads_total{result="applied"} 2');
    expect(metrics).toContain('organism_reloads_total{result="refused"} 2');
    // The removed listener's queue is gone from the gauges.
    expect(metrics).not.toContain('organism_queue_depth{listener="napper"}');
  });

  it('reports settings that need a restart instead of applying them', async () => {
    await writeFile(
      file,
      V1.replace('organism:\n', 'server:\n  port: 7999\norganism:\n  optimize_for: speed\n'),
    );
    const res = await api('/api/v1/organism/reload', { method: 'POST' });
    expect(res.status).toBe(200);
    // V8's flags are set once, at start (src/daemon/v8-flags.ts).
    expect(res.json.restart_required).toEqual(['server.port', 'organism.optimize_for']);
    expect(res.json.added).toEqual(['napper']);
    expect(res.json.removed).toEqual(['napper2']);
    // Still answering where it was.
    expect((await api('/api/v1/organism')).status).toBe(200);
  });
});
