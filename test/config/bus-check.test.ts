/**
 * organism.yaml's bus section for partitions and a Redis Cluster: what loads, and the clear error
 * for each combination that cannot work.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { issueAt, issuesOf } from './helpers.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'organism-bus-check-'));
  await writeFile(
    join(dir, 'echo.ts'),
    `import { defineListener } from '${process.cwd()}/src/listener/types.ts';\nexport default defineListener({ payload: { tag: 'echo', schema: { type: 'object' } }, handler: () => undefined });\n`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(name: string, bus: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(
    file,
    `organism:\n  name: bus-check\n  data_dir: ${dir}/data\nbus:\n${bus}listeners:\n  - name: echo\n    description: echoes\n    handler: ./echo.ts\n`,
  );
  return file;
}

describe('bus.partitions and cluster URLs in organism.yaml', () => {
  it('loads a cluster URL with seed nodes and partitions, and defaults partitions to 1', async () => {
    const cluster = await loadConfig(
      await write(
        'cluster.yaml',
        '  transport: redis\n  url: redis+cluster://:s3cret@127.0.0.1:7000,127.0.0.1:7001\n  partitions: 6\n',
      ),
    );
    expect(cluster.config.bus).toMatchObject({
      partitions: 6,
      url: 'redis+cluster://:s3cret@127.0.0.1:7000,127.0.0.1:7001',
    });
    const plain = await loadConfig(
      await write('plain.yaml', '  transport: redis\n  url: redis://127.0.0.1:6379\n'),
    );
    expect(plain.config.bus.partitions).toBe(1);
  });

  it('refuses partitions without the Redis transport, a bad seed list, and out-of-range partitions', async () => {
    const memory = await issuesOf(await write('memory.yaml', '  partitions: 4\n'));
    expect(issueAt(memory, 'bus.partitions').message).toMatch(
      /bus\.partitions: 4 splits the Redis streams, so it needs bus\.transport: redis/,
    );
    const seeds = await issuesOf(
      await write('seeds.yaml', '  transport: redis\n  url: redis+cluster://127.0.0.1:7000,:notaport\n'),
    );
    expect(issueAt(seeds, 'bus.url').message).toMatch(/':notaport' is not a host:port seed node/);
    const db = await issuesOf(
      await write('db.yaml', '  transport: redis\n  url: redis+cluster://127.0.0.1:7000/2\n'),
    );
    expect(issueAt(db, 'bus.url').message).toMatch(/no path \(a cluster has no database number\)/);
    const many = await issuesOf(
      await write('many.yaml', '  transport: redis\n  url: redis://127.0.0.1\n  partitions: 1000\n'),
    );
    expect(issueAt(many, 'bus.partitions').message).toMatch(/256/);
  });
});
