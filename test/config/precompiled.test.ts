/**
 * The compiled package validates organism.yaml with the validator `npm run build` precompiled
 * (bin/precompile-validators.js), not by compiling organism.schema.json at every start. It must
 * be that validator, and it must answer exactly as the one compiled at run time: same verdict, same
 * defaults filled in, same ajv errors (which the loader words), so the same messages.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { organismSchema } from '../../src/config/schema.ts';
import { configAjv, configSchemaDigest, PRECOMPILED_CONFIG_VALIDATOR } from '../../src/config/validate.ts';
import { FIXTURES } from './helpers.ts';

const DIST_CONFIG = fileURLToPath(new URL('../../dist/src/config/', import.meta.url));
const PRECOMPILED = `${DIST_CONFIG}${PRECOMPILED_CONFIG_VALIDATOR}`;

type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null; digest?: string };

/** Documents to validate: every config fixture, and each with one key after another broken. */
function documents(): unknown[] {
  const out: unknown[] = [];
  const wrong: unknown[] = ['x', -1, 2.5, true, [], {}, null, [{}], { zzz: 1 }];
  for (const name of readdirSync(FIXTURES).filter((n) => n.endsWith('.yaml'))) {
    const data = parse(readFileSync(`${FIXTURES}${name}`, 'utf8')) as Record<string, any>;
    out.push(data);
    for (const [key, value] of Object.entries(data ?? {})) {
      for (const bad of wrong) out.push({ ...data, [key]: bad });
      if (value && typeof value === 'object' && !Array.isArray(value)) {
        for (const inner of Object.keys(value)) {
          for (const bad of wrong) out.push({ ...data, [key]: { ...value, [inner]: bad } });
        }
      }
    }
    for (const [i, listener] of (Array.isArray(data?.listeners) ? data.listeners : []).entries()) {
      for (const inner of Object.keys(listener ?? {})) {
        for (const bad of wrong) {
          const listeners = [...data.listeners];
          listeners[i] = { ...listener, [inner]: bad };
          out.push({ ...data, listeners });
        }
      }
    }
  }
  out.push({}, null, [], 'organism', { organism: {}, listeners: [], provider: { kind: 'anthropic' } });
  return out;
}

describe('the precompiled organism.yaml validator', () => {
  it('is built into dist/ from the schema as it is now, and is what the compiled loader uses', async () => {
    expect(existsSync(PRECOMPILED)).toBe(true);
    const precompiled = createRequire(import.meta.url)(PRECOMPILED) as Validate;
    expect(precompiled.digest).toBe(configSchemaDigest());
    const dist = (await import(`${DIST_CONFIG}validate.js`)) as { schemaValidator(): Validate };
    expect(dist.schemaValidator()).toBe(precompiled);
  });

  it('answers every document as the validator compiled at run time: verdict, defaults and errors', () => {
    const precompiled = createRequire(import.meta.url)(PRECOMPILED) as Validate;
    const runtime = configAjv().compile(organismSchema) as Validate;
    const docs = documents();
    expect(docs.length).toBeGreaterThan(500);
    let refused = 0;
    for (const doc of docs) {
      const a = structuredClone(doc);
      const b = structuredClone(doc);
      const verdict = runtime(a);
      expect(precompiled(b), JSON.stringify(doc)).toBe(verdict);
      expect(b).toEqual(a);
      expect(precompiled.errors ?? null).toEqual(runtime.errors ?? null);
      if (!verdict) refused++;
    }
    expect(refused).toBeGreaterThan(400);
  });

  it('is not kept while unused: after a collection it is gone, and the next validation loads it again', async () => {
    // In a process of its own with --expose-gc: nothing but the loader's weak reference may hold
    // the validator (~260 KB of code an idle daemon would otherwise keep), and it still validates.
    const script = `
      const { schemaValidator } = await import(${JSON.stringify(pathToFileURL(`${DIST_CONFIG}validate.js`).href)});
      let collected = false;
      const registry = new FinalizationRegistry(() => { collected = true; });
      const first = () => { const v = schemaValidator(); registry.register(v, 'validator'); return v({}); };
      const verdict = first();
      for (let i = 0; i < 20 && !collected; i++) {
        await new Promise((r) => setTimeout(r, 10));
        globalThis.gc();
      }
      const again = schemaValidator();
      console.log(JSON.stringify({ verdict, collected, again: again({}), digest: typeof again.digest }));
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--input-type=module', '-e', script],
      { timeout: 30_000 },
    );
    expect(JSON.parse(stdout)).toEqual({ verdict: false, collected: true, again: false, digest: 'string' });
  });
});
