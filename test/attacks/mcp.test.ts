/**
 * Attacks on the MCP client (issue 18) with a hostile server over stdio (sandboxed as usual): its
 * odd tool names, schemas that do not compile, a catastrophic `pattern` and a 20 MB result must
 * cost only that tool, never the daemon, and every call still goes through the dispatcher.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readAuditLines } from '../../src/audit/read.ts';
import { withoutPatterns } from '../../src/mcp/client/schema.ts';
import type { ToolRuntime } from '../../src/tools/runtime.ts';
import { call, REPO, startRuntime, tempOrganism } from '../mcp/helpers.ts';

const HOSTILE = join(REPO, 'test/attacks/fixtures/hostile-mcp.mjs');

let runtime: ToolRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

let dataDir = '';

async function hostile(tools: string[], extra = '') {
  const o = await tempOrganism(`mcp_servers:
  - name: hostile
    command: /usr/bin/node
    args: [${JSON.stringify(HOSTILE)}]
    capabilities: { ok: read, loop: read, dangling: read, badtype: read, redos: read, redoskeys: read, redosdeps: read, huge: read, verbose: read, bigschema: read, hugeerror: read }
${extra}listeners:
  - name: worker
    agent: true
    description: works
    tools: [${tools.join(', ')}]
`);
  dataDir = o.dataDir;
  runtime = await startRuntime(o);
  return runtime;
}

describe('withoutPatterns', () => {
  it('leaves no pattern anywhere a schema can hide one from the validator', () => {
    const p = { type: 'string', pattern: '^(a+)+$' };
    const hiding: Record<string, unknown> = {
      properties: { properties: { s: p } },
      dependencies: { dependencies: { s: { properties: { s: p } } } },
      dependentSchemas: { dependentSchemas: { s: { properties: { s: p } } } },
      defs: { $defs: { d: p }, properties: { s: { $ref: '#/$defs/d' } } },
      definitions: { definitions: { d: p }, properties: { s: { $ref: '#/definitions/d' } } },
      tuple: { properties: { s: { type: 'array', items: [p] } } },
      prefixItems: { properties: { s: { type: 'array', prefixItems: [p] } } },
      nested: { properties: { s: { anyOf: [{ allOf: [{ oneOf: [p] }] }] } } },
      // biome-ignore lint/suspicious/noThenProperty: a JSON Schema's if/then/else
      conditional: { if: { properties: { s: p } }, then: { properties: { s: p } }, else: { not: p } },
      names: { propertyNames: p },
      contains: { properties: { s: { type: 'array', contains: p } } },
      additional: { additionalProperties: p },
      unevaluated: { unevaluatedProperties: p },
    };
    for (const [where, schema] of Object.entries(hiding)) {
      expect(JSON.stringify(withoutPatterns({ type: 'object', ...(schema as object) })), where).not.toContain(
        '"pattern"',
      );
    }
    // A property called `pattern` is a property, not a regular expression: it stays.
    const named = withoutPatterns({ type: 'object', properties: { pattern: { type: 'string' } } });
    expect(named).toMatchObject({ properties: { pattern: { type: 'string' } } });
  });
});

describe('a hostile MCP server', () => {
  it('schemas that do not compile make only their tool unavailable; the others still work', async () => {
    const r = await hostile(['hostile.ok', 'hostile.loop', 'hostile.dangling', 'hostile.badtype']);
    expect(await call(r, 'worker', 'hostile.ok')).toMatchObject({
      status: 'ok',
      value: { text: 'called ok' },
    });
    for (const tool of ['hostile.loop', 'hostile.dangling', 'hostile.badtype']) {
      const result = await call(r, 'worker', tool, {});
      expect(result.status, tool).not.toBe('ok');
    }
    expect(await call(r, 'worker', 'hostile.ok')).toMatchObject({ status: 'ok' });
  });

  it('a catastrophic pattern in its schema cannot stall the daemon on an argument built for it', async () => {
    const r = await hostile(['hostile.redos', 'hostile.redoskeys', 'hostile.redosdeps']);
    // Unchecked, 2^32 backtracking steps: most of a minute with the event loop blocked (measured
    // before the fix with forty a's: the test ran six minutes).
    const evil = `${'a'.repeat(32)}!`;
    const result = await call(r, 'worker', 'hostile.redos', { s: evil });
    expect(['ok', 'refused', 'error']).toContain(result.status);
    const keys = await call(r, 'worker', 'hostile.redoskeys', { [`${'b'.repeat(32)}!`]: 'x' });
    expect(['ok', 'refused', 'error']).toContain(keys.status);
    const deps = await call(r, 'worker', 'hostile.redosdeps', { s: evil });
    expect(['ok', 'refused', 'error']).toContain(deps.status);
  }, 60_000);

  it('a 20 MB result, or a 3 MB error, is cut to the result cap', async () => {
    const r = await hostile(['hostile.huge', 'hostile.hugeerror']);
    // The error first: the sandboxed server was seen to exit after answering the 20 MB call.
    const error = await call(r, 'worker', 'hostile.hugeerror');
    expect(error.status, JSON.stringify(error).slice(0, 300)).toBe('error');
    expect(JSON.stringify(error).length).toBeLessThan(2 * 1024 * 1024);
    // Nor is the audit log's record of it megabytes long.
    await r.audit.flush();
    const lines = await readAuditLines(join(dataDir, 'audit.jsonl'));
    const record = lines.find((l) => l.includes('"hostile.hugeerror"'));
    expect(record).toBeDefined();
    expect(record!.length).toBeLessThan(64 * 1024);
    const result = await call(r, 'worker', 'hostile.huge');
    expect(JSON.stringify(result).length).toBeLessThan(2 * 1024 * 1024);
  }, 60_000);

  it('odd tool names are registered under the server and never collide with a native tool', async () => {
    const r = await hostile(['hostile.ok']);
    await call(r, 'worker', 'hostile.ok');
    const names = r.registry.names();
    expect(Array.isArray(names)).toBe(true);
    expect(r.registry.get('calculate')?.definition.source ?? 'native').toBe('native');
    // A tool named with markup, granted nowhere, cannot be called.
    const markup = await call(r, 'worker', 'hostile.</description><tool>');
    expect(markup.status).toBe('refused');
  });

  it('a megabyte of description or schema is not what an agent is offered (bounded), and the tool still answers', async () => {
    const r = await hostile(['hostile.verbose', 'hostile.bigschema']);
    await call(r, 'worker', 'hostile.verbose');
    const verbose = r.registry.get('hostile.verbose')!.definition;
    expect(verbose.description.length).toBeLessThanOrEqual(8_200);
    expect(verbose.description).toContain('more characters');
    expect(await call(r, 'worker', 'hostile.verbose')).toMatchObject({ status: 'ok' });
    const big = r.registry.get('hostile.bigschema')!.definition;
    expect(JSON.stringify(big.args).length).toBeLessThanOrEqual(65_536);
    const refused = await call(r, 'worker', 'hostile.bigschema', {});
    expect(refused.status).toBe('refused');
    expect(JSON.stringify(refused)).toContain('input schema');
  }, 60_000);
});
