/** loadConfig's environment: the .env beside organism.yaml under the process environment. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDataDir } from '../../src/config/data-dir.ts';
import { loadConfig } from '../../src/config/index.ts';

async function organism(yaml: string, dotEnv?: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-env-'));
  await writeFile(join(dir, 'organism.yaml'), yaml);
  if (dotEnv !== undefined) await writeFile(join(dir, '.env'), dotEnv);
  return join(dir, 'organism.yaml');
}

const YAML = `organism:\n  name: env\n  data_dir: \${DATA:-state}\nauth:\n  tokens:\n    - { name: me, role: admin, token_env: MY_TOKEN }\nlisteners:\n  - { name: p, handler: ./p.ts }\n`;

describe('LoadedOrganism.env', () => {
  it('holds the .env values, with the given environment winning', async () => {
    const file = await organism(YAML, 'MY_TOKEN=from-dotenv-0123456789\nOTHER=x\nDATA=kept\n');
    const fromFile = await loadConfig(file, { env: {}, loadModules: false });
    expect(fromFile.env.MY_TOKEN).toBe('from-dotenv-0123456789');
    expect(fromFile.env.OTHER).toBe('x');
    expect(fromFile.config.organism.data_dir).toMatch(/kept$/);

    const both = await loadConfig(file, {
      env: { MY_TOKEN: 'from-process-0123456789', DATA: 'mine' },
      loadModules: false,
    });
    expect(both.env.MY_TOKEN).toBe('from-process-0123456789');
    expect(both.env.OTHER).toBe('x');
    expect(both.config.organism.data_dir).toMatch(/mine$/);
  });

  it('is the given environment alone without a .env', async () => {
    const file = await organism(YAML);
    const loaded = await loadConfig(file, { env: { MY_TOKEN: 't' }, loadModules: false });
    expect(loaded.env).toEqual({ MY_TOKEN: 't' });
  });
});

describe('readDataDir', () => {
  it('finds data_dir in a file the loader refuses, its variables filled from the .env', async () => {
    const file = await organism(`${YAML}bogus: true\n`, 'DATA=elsewhere\n');
    await expect(loadConfig(file, { env: {}, loadModules: false })).rejects.toThrow(/bogus/);
    expect(await readDataDir(file, {})).toBe(join(file, '..', 'elsewhere'));
    expect(await readDataDir(await organism('organism: {name: x}\n'), {})).toMatch(/\.organism$/);
    expect(await readDataDir(await organism('organism: [unclosed\n'), {})).toBeUndefined();
  });
});
