/**
 * With no `telemetry:` section nothing of OpenTelemetry is imported: a daemon started and stopped
 * in a fresh process, with a module hook recording every @opentelemetry module resolved (and the
 * require cache read at the end, for those a CommonJS package required), loads none; with the section, the same hook sees the SDK and the exporter load.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/daemon.ts';
import { DEFAULT_LISTENERS, organismFile, telemetryYaml } from './support/organism.ts';

const SUPPORT = fileURLToPath(new URL('./support/', import.meta.url));

/** The @opentelemetry modules a daemon started and stopped on `file` imported. */
async function otelImports(file: string): Promise<string[]> {
  const record = join(await mkdtemp(join(tmpdir(), 'organism-otel-imports-')), 'imports.txt');
  await writeFile(record, '');
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--import',
      join(SUPPORT, 'record-otel-imports.mjs'),
      join(SUPPORT, 'start-stop.ts'),
      file,
    ],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, OTEL_IMPORTS_FILE: record },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (c) => {
    stderr += c;
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  expect(code, stderr).toBe(0);
  return (await readFile(record, 'utf8')).split('\n').filter((l) => l !== '');
}

describe('OpenTelemetry is loaded only when configured', { timeout: 60_000 }, () => {
  it('imports nothing of it without a telemetry: section', async () => {
    const file = await organismFile(DEFAULT_LISTENERS);
    expect(await otelImports(file)).toEqual([]);
  });

  it('imports the SDK and the OTLP exporter with one', async () => {
    const file = await organismFile(DEFAULT_LISTENERS + telemetryYaml({ endpoint: 'http://127.0.0.1:4318' }));
    const imports = await otelImports(file);
    expect(imports.some((u) => u.includes('/@opentelemetry/sdk-trace-base/'))).toBe(true);
    expect(imports.some((u) => u.includes('/@opentelemetry/otlp-exporter-base/'))).toBe(true);
  });
});
