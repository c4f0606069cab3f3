/** Signed tool manifest: verified at start and before each call; a changed module is refused with a threat record. */
import { appendFile, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditKeyOptions, loadAuditKeys } from '../../../src/audit/key.ts';
import { readAuditLines, verifyAuditFile } from '../../../src/audit/read.ts';
import { captureIo } from '../../../src/cli/io.ts';
import { main } from '../../../src/cli/main.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { createToolRuntime, type ToolRuntime } from '../../../src/tools/runtime.ts';
import { tableGuard } from './helpers.ts';
import { type TempOrganism, tempOrganism, toolModule, writeTool } from './organism.ts';

async function organism(): Promise<TempOrganism> {
  return tempOrganism({
    tools: { 'noop.ts': toolModule('noop'), 'other.ts': toolModule('other') },
    researcherTools: ['noop', 'other'],
  });
}

async function sign(o: TempOrganism, ...extra: string[]): Promise<ReturnType<typeof captureIo>> {
  const io = captureIo();
  const code = await main(['tools', 'sign', '--config', o.config, '--root', o.root, ...extra], io);
  expect(code, io.stderr.join('\n')).toBe(0);
  return io;
}

async function start(
  o: TempOrganism,
  env: NodeJS.ProcessEnv = {},
): Promise<{ runtime: ToolRuntime; warnings: string[] }> {
  const warnings: string[] = [];
  const runtime = await createToolRuntime(await loadConfig(o.config, { loadModules: false }), {
    root: o.root,
    guard: tableGuard(),
    warn: (m) => warnings.push(m),
    // The audit key's default place follows $XDG_CONFIG_HOME: keep the test run's throwaway one.
    env: { XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, ...env },
  });
  return { runtime, warnings };
}

function call(runtime: ToolRuntime, tool: string) {
  return runtime.dispatcher.call({ tool, args: {}, listener: 'researcher', thread: 't' });
}

async function auditRecords(o: TempOrganism): Promise<Array<Record<string, unknown>>> {
  return (await readAuditLines(join(o.dataDir, 'audit.jsonl'))).map((l) => JSON.parse(l));
}

describe('tool integrity', () => {
  it('unsigned: calls pass, with one warning saying the modules are not checked', async () => {
    const o = await organism();
    const { runtime, warnings } = await start(o);
    expect(runtime.integrity.signed).toBe(false);
    expect((await call(runtime, 'noop')).status).toBe('ok');
    expect((await call(runtime, 'other')).status).toBe('ok');
    await runtime.close();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('no tool manifest at');
    expect(warnings[0]).toContain("run 'organism tools sign'");
  });

  it('sign writes a manifest and a 0600 key; a module changed afterwards is refused with a threat record', async () => {
    const o = await organism();
    const io = await sign(o);
    expect(io.stdout.join('\n')).toMatch(
      /generated a new Ed25519 signing key: .*tools-signing\.key \(mode 0600\)/,
    );
    expect(io.stdout.join('\n')).toMatch(/signed 2 tools into .*tools\.manifest\.json/);
    expect((await stat(join(o.dataDir, 'tools-signing.key'))).mode & 0o777).toBe(0o600);
    const manifest = JSON.parse(await readFile(join(o.dir, 'tools.manifest.json'), 'utf8'));
    expect(Object.keys(manifest.tools)).toEqual(['noop', 'other']);
    expect(manifest.tools.noop.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.signature.length).toBeGreaterThan(40);

    const { runtime, warnings } = await start(o);
    expect(runtime.integrity.signed).toBe(true);
    expect(warnings).toEqual([]);
    expect((await call(runtime, 'noop')).status).toBe('ok');

    await appendFile(join(o.root, 'tools', 'noop.ts'), '\n// a quiet change\n');
    const refused = await call(runtime, 'noop');
    expect(refused).toMatchObject({ status: 'refused', error: { code: 'IntegrityFailure' } });
    if (refused.status === 'ok') throw new Error('unreachable');
    expect(refused.error.message).toContain('changed since it was signed');
    expect((await call(runtime, 'other')).status).toBe('ok');
    expect(runtime.dispatcher.availability('researcher').find((a) => a.tool === 'noop')?.reason).toMatch(
      /^integrity failure: /,
    );
    await runtime.close();

    const records = await auditRecords(o);
    const threats = records.filter((r) => r.type === 'threat');
    expect(threats).toHaveLength(1);
    expect(threats[0]).toMatchObject({
      kind: 'integrity',
      tool: 'noop',
      module: join(o.root, 'tools', 'noop.ts'),
    });
    expect(records.filter((r) => r.type === 'call').map((r) => [r.tool, r.outcome, r.code])).toEqual([
      ['noop', 'ok', null],
      ['noop', 'refused', 'IntegrityFailure'],
      ['other', 'ok', null],
    ]);
    // The log is sealed with the organism's audit key: verify with it, as `organism audit --verify` does.
    const keys = await loadAuditKeys(
      auditKeyOptions((await loadConfig(o.config, { loadModules: false })).config),
    );
    expect((await verifyAuditFile(join(o.dataDir, 'audit.jsonl'), keys?.keys)).ok).toBe(true);

    // After a restart the changed module is caught at start, before any call.
    const again = await start(o);
    expect((await call(again.runtime, 'noop')).status).toBe('refused');
    await again.runtime.close();
    expect((await auditRecords(o)).filter((r) => r.type === 'threat')).toHaveLength(2);

    // Signing again accepts the change.
    await sign(o);
    const resigned = await start(o);
    expect((await call(resigned.runtime, 'noop')).status).toBe('ok');
    await resigned.runtime.close();
  });

  it('covers the local helper modules a tool imports: a changed helper is refused too', async () => {
    const o = await tempOrganism({
      tools: {
        'helped.ts': `import { answer } from './lib/answer.ts';\n${toolModule('helped', 'return { ok: answer() };')}`,
        'plain.ts': toolModule('plain'),
      },
      researcherTools: ['helped', 'plain'],
    });
    await mkdir(join(o.root, 'tools', 'lib'), { recursive: true });
    const helper = join(o.root, 'tools', 'lib', 'answer.ts');
    await writeFile(helper, "import { deeper } from './deeper.ts';\nexport const answer = () => deeper;\n");
    await writeFile(join(o.root, 'tools', 'lib', 'deeper.ts'), 'export const deeper = 42;\n');
    await sign(o);
    const manifest = JSON.parse(await readFile(join(o.dir, 'tools.manifest.json'), 'utf8'));
    expect(Object.keys(manifest.tools.helped.imports).sort()).toEqual([
      expect.stringMatching(/tools\/lib\/answer\.ts$/),
      expect.stringMatching(/tools\/lib\/deeper\.ts$/),
    ]);
    expect(manifest.tools.plain.imports).toEqual({});

    const { runtime } = await start(o);
    expect(await call(runtime, 'helped')).toMatchObject({ status: 'ok', value: { ok: 42 } });
    // A change two imports deep, where the tool file itself is untouched.
    await writeFile(join(o.root, 'tools', 'lib', 'deeper.ts'), 'export const deeper = 43;\n');
    const refused = await call(runtime, 'helped');
    expect(refused).toMatchObject({ status: 'refused', error: { code: 'IntegrityFailure' } });
    if (refused.status === 'ok') throw new Error('unreachable');
    expect(refused.error.message).toContain('helper module');
    expect(refused.error.message).toContain('deeper.ts changed since it was signed');
    expect((await call(runtime, 'plain')).status).toBe('ok');
    await runtime.close();
  });

  it('a registered function replaced at run time is refused', async () => {
    const o = await organism();
    await sign(o);
    const { runtime } = await start(o);
    const registered = runtime.registry.get('noop');
    if (!registered) throw new Error('noop not registered');
    (registered.definition as { run: unknown }).run = async () => ({ evil: true });
    const result = await call(runtime, 'noop');
    expect(result).toMatchObject({ status: 'refused', error: { code: 'IntegrityFailure' } });
    if (result.status === 'ok') throw new Error('unreachable');
    expect(result.error.message).toContain('run function was replaced');
    await runtime.close();
  });

  it('a tampered manifest, a missing public key, or an unsigned new tool is refused', async () => {
    const o = await organism();
    await sign(o);
    await writeTool(o.root, 'zz-new.ts', toolModule('newcomer'));
    const first = await start(o);
    expect((await call(first.runtime, 'noop')).status).toBe('ok');
    // newcomer is not granted, so check availability rather than a call.
    expect(first.runtime.integrity.check(first.runtime.registry.get('newcomer') as never)).toContain(
      'not in the signed manifest',
    );
    await first.runtime.close();

    const manifestPath = join(o.dir, 'tools.manifest.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
    manifest.tools.noop.sha256 = '0'.repeat(64);
    await writeFile(manifestPath, JSON.stringify(manifest));
    const tampered = await start(o);
    const result = await call(tampered.runtime, 'other');
    expect(result).toMatchObject({ status: 'refused', error: { code: 'IntegrityFailure' } });
    if (result.status === 'ok') throw new Error('unreachable');
    expect(result.error.message).toContain('bad signature');
    await tampered.runtime.close();

    await sign(o);
    await rm(join(o.dataDir, 'tools-signing.pub'));
    const keyless = await start(o);
    const noKey = await call(keyless.runtime, 'noop');
    if (noKey.status === 'ok') throw new Error('a manifest with no trusted key must fail closed');
    expect(noKey.error.message).toContain('no public key is configured');
    await keyless.runtime.close();
  });

  it('trusts the key in tools.public_key_env, and refuses a manifest signed with another key', async () => {
    const o = await tempOrganism({
      tools: { 'noop.ts': toolModule('noop') },
      researcherTools: ['noop'],
      extraYaml: 'tools:\n  public_key_env: ORGANISM_TOOLS_KEY\n',
    });
    const io = await sign(o);
    const der = /public key \(base64 SPKI, for tools.public_key_env\): (\S+)/.exec(io.stdout.join('\n'))?.[1];
    expect(der).toBeTruthy();
    expect(io.stderr.join('\n')).toContain('ORGANISM_TOOLS_KEY does not hold this key');
    const good = await start(o, { ORGANISM_TOOLS_KEY: der });
    expect((await call(good.runtime, 'noop')).status).toBe('ok');
    await good.runtime.close();

    const { generateKeyPairSync } = await import('node:crypto');
    const other = generateKeyPairSync('ed25519')
      .publicKey.export({ type: 'spki', format: 'der' })
      .toString('base64');
    const bad = await start(o, { ORGANISM_TOOLS_KEY: other });
    expect((await call(bad.runtime, 'noop')).status).toBe('refused');
    await bad.runtime.close();
  });

  it('sign --key uses the given private key', async () => {
    const o = await organism();
    const { generateKeyPairSync } = await import('node:crypto');
    const keyFile = join(o.dir, 'my.key');
    await writeFile(
      keyFile,
      generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }),
    );
    const io = await sign(o, '--key', keyFile);
    expect(io.stdout.join('\n')).not.toContain('generated a new');
    const { runtime } = await start(o);
    expect((await call(runtime, 'noop')).status).toBe('ok');
    await runtime.close();
    const badKey = captureIo();
    await writeFile(keyFile, 'not a key');
    expect(
      await main(['tools', 'sign', '--config', o.config, '--root', o.root, '--key', keyFile], badKey),
    ).toBe(1);
    expect(badKey.stderr.join('\n')).toContain(`cannot use signing key ${keyFile}`);
  });
});
