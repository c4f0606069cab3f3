/** `organism tools ...` and `organism audit ...` as a user runs them: exit codes, output, audit. */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureIo } from '../../../src/cli/io.ts';
import { main } from '../../../src/cli/main.ts';
import { type TempOrganism, tempOrganism, toolModule } from './organism.ts';

async function organism(): Promise<TempOrganism> {
  return tempOrganism({
    tools: {
      'a-noop.ts': toolModule('noop'),
      'b-echo.ts': toolModule('echo', 'return { echoed: args.text };'),
      'c-thrower.ts': toolModule('thrower', "throw new Error('disk on fire');"),
      'd-shell.ts': toolModule('shell_like', 'return { ran: args.command };', "\n  guard: 'shell',"),
    },
    researcherTools: ['noop', 'echo', 'thrower', 'shell_like'],
    writerTools: ['echo'],
    researcherYaml: '    trust: low\n',
  });
}

async function run(o: TempOrganism, ...args: string[]) {
  const io = captureIo();
  const code = await main([...args, '--config', o.config], io);
  return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
}

async function tools(o: TempOrganism, ...args: string[]) {
  return run(o, 'tools', ...args, '--root', o.root);
}

describe('organism tools list', () => {
  it('lists tools in registration order with descriptions', async () => {
    const o = await organism();
    const { code, out } = await tools(o, 'list');
    expect(code).toBe(0);
    const lines = out.split('\n');
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual(['noop', 'echo', 'thrower', 'shell_like']);
    expect(lines[1]).toContain('Test tool echo; answers a small object.');
    expect(out).not.toContain('UNAVAILABLE');
  });

  it('with --as marks each tool the listener cannot use, and why', async () => {
    const o = await organism();
    const { code, out } = await tools(o, 'list', '--as', 'writer');
    expect(code).toBe(0);
    const lines = out.split('\n');
    expect(lines[0]).toMatch(/^noop .*\[UNAVAILABLE: not granted to writer\]$/);
    expect(lines[1]).not.toContain('UNAVAILABLE');
    expect(lines[2]).toContain('[UNAVAILABLE: not granted to writer]');
    await tools(o, 'revoke', 'echo', '--reason', 'under review');
    expect((await tools(o, 'list', '--as', 'writer')).out.split('\n')[1]).toContain(
      '[UNAVAILABLE: revoked: under review]',
    );
  });

  it('an unknown listener is an error naming the listeners', async () => {
    const o = await organism();
    const { code, err } = await tools(o, 'list', '--as', 'reseacher');
    expect(code).toBe(1);
    expect(err).toContain("no listener named 'reseacher'");
    expect(err).toContain('did you mean researcher?');
  });
});

describe('organism tools call', () => {
  it('exit 0 and the result JSON when the tool ran', async () => {
    const o = await organism();
    const { code, out } = await tools(o, 'call', 'echo', '--as', 'writer', '--args', '{"text": "hi"}');
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual({ status: 'ok', tool: 'echo', value: { echoed: 'hi' } });
  });

  it('takes the arguments as a positional JSON word too', async () => {
    const o = await organism();
    const { code, out } = await tools(o, 'call', 'echo', '{"text": "positional"}', '--as', 'writer');
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual({ status: 'ok', tool: 'echo', value: { echoed: 'positional' } });
    const both = await tools(o, 'call', 'echo', '{"text": "a"}', '--as', 'writer', '--args', '{"text": "b"}');
    expect(both.code).toBe(1);
    expect(both.err).toContain('one tool name');
  });

  it('exit 2 when refused: not granted, bad arguments, outside the scope, guard deny', async () => {
    const o = await organism();
    const notGranted = await tools(o, 'call', 'noop', '--as', 'writer');
    expect(notGranted.code).toBe(2);
    expect(JSON.parse(notGranted.out)).toEqual({
      status: 'refused',
      tool: 'noop',
      error: { code: 'PermissionDenied', message: 'tool noop is not granted to writer' },
    });
    const badArgs = await tools(o, 'call', 'echo', '--as', 'writer', '--args', '{"text": 5}');
    expect(badArgs.code).toBe(2);
    expect(JSON.parse(badArgs.out).error.message).toContain("argument 'text' must be string (got integer)");
    const scoped = await tools(o, 'call', 'echo', '--as', 'writer', '--scope', 'fetch_web');
    expect(scoped.code).toBe(2);
    expect(JSON.parse(scoped.out).error.code).toBe('OutsideScope');
    const denied = await tools(
      o,
      'call',
      'shell_like',
      '--as',
      'researcher',
      '--args',
      '{"command": "rm -rf /"}',
    );
    expect(denied.code).toBe(2);
    const error = JSON.parse(denied.out).error;
    expect(error.code).toBe('GuardDenied');
    expect(error.rule_id).toMatch(/\S/);
  });

  it('exit 1 when the tool failed, or for bad input to the command', async () => {
    const o = await organism();
    const failed = await tools(o, 'call', 'thrower', '--as', 'researcher');
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.out)).toEqual({
      status: 'error',
      tool: 'thrower',
      error: { code: 'ToolError', message: 'tool thrower failed: disk on fire' },
    });
    const badJson = await tools(o, 'call', 'echo', '--as', 'writer', '--args', '{text: hi}');
    expect(badJson.code).toBe(1);
    expect(badJson.err).toContain('--args is not valid JSON');
    const notObject = await tools(o, 'call', 'echo', '--as', 'writer', '--args', '[1]');
    expect(notObject.code).toBe(1);
    expect(notObject.err).toContain('--args must be a JSON object');
    const noAs = await tools(o, 'call', 'echo');
    expect(noAs.code).toBe(1);
    expect(noAs.err).toContain('needs --as LISTENER');
    const badScope = await tools(o, 'call', 'echo', '--as', 'writer', '--scope', 'root');
    expect(badScope.code).toBe(1);
    expect(badScope.err).toContain("unknown capability 'root'");
  });

  it('help, no subcommand, and an unknown subcommand', async () => {
    const o = await organism();
    const help = await tools(o, '--help');
    expect(help.code).toBe(0);
    expect(help.out).toContain('usage: organism tools <subcommand>');
    expect((await tools(o)).code).toBe(1);
    const unknown = await tools(o, 'frobnicate');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("unknown subcommand 'frobnicate'");
  });
});

describe('organism audit', () => {
  it('prints the records of calls made with tools call, secrets redacted, and verifies the chain', async () => {
    const o = await organism();
    const secret = 'sk-live-abcdefghijklmnopqrstuvwxyz012345';
    await tools(o, 'call', 'echo', '--as', 'writer', '--args', JSON.stringify({ text: `use ${secret}` }));
    await tools(o, 'call', 'noop', '--as', 'writer');
    await tools(o, 'call', 'shell_like', '--as', 'researcher', '--args', '{"command": "rm -rf /"}');

    const all = await run(o, 'audit');
    expect(all.code).toBe(0);
    const [identity, ...records] = all.out.split('\n').map((l) => JSON.parse(l));
    // The log's first record names its organism and log id (the checkpoints name the same id).
    expect(identity).toMatchObject({ type: 'log', adopted: 0 });
    expect(identity.log_id).toMatch(/^[0-9a-f]{32}$/);
    expect(records.map((r) => [r.listener, r.tool, r.outcome, r.code])).toEqual([
      ['writer', 'echo', 'ok', null],
      ['writer', 'noop', 'refused', 'PermissionDenied'],
      ['researcher', 'shell_like', 'refused', 'GuardDenied'],
    ]);
    expect(records[2]).toMatchObject({ trust: 'low', verdict: 'deny', input: { command: 'rm -rf /' } });
    expect(records[2].rule_id).toMatch(/\S/);
    expect(all.out).not.toContain(secret);
    expect(records[0].input.text).toBe('use [REDACTED]');

    const tail = await run(o, 'audit', '--tail', '1');
    expect(tail.out.split('\n')).toHaveLength(1);
    expect(JSON.parse(tail.out).tool).toBe('shell_like');

    const verified = await run(o, 'audit', '--verify');
    expect(verified.code).toBe(0);
    expect(verified.out).toContain('4 records, hash chain intact');

    const path = join(o.dataDir, 'audit.jsonl');
    const lines = (await readFile(path, 'utf8')).split('\n');
    lines[2] = (lines[2] as string).replace('"PermissionDenied"', '"ok"');
    await writeFile(path, lines.join('\n'));
    const broken = await run(o, 'audit', '--verify');
    expect(broken.code).toBe(1);
    expect(broken.err).toContain(`${path}:3: record 3 does not match its own hash`);
  });

  it('rejects a bad --tail', async () => {
    const o = await organism();
    const bad = await run(o, 'audit', '--tail', 'ten');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('--tail must be a whole number');
  });
});
