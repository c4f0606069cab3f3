/** docs/reference/http-api.md is what the OpenAPI document renders: every operation in its table. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { referencePath } from '../../src/reference/files.ts';
import { renderHttpApiReference } from '../../src/reference/http-api.ts';
import { referenceText } from '../../src/server/openapi/reference.ts';

describe('docs/reference/http-api.md', () => {
  it('is exactly what the OpenAPI document renders (run npx tsx src/reference/update.ts)', () => {
    expect(readFileSync(referencePath('http-api.md'), 'utf8')).toBe(renderHttpApiReference());
  });

  it("has one row per operation of the document, with the operation's role", () => {
    const doc = JSON.parse(referenceText());
    const page = renderHttpApiReference();
    let operations = 0;
    for (const [path, item] of Object.entries(doc.paths) as Array<[string, Record<string, any>]>) {
      for (const [method, op] of Object.entries(item)) {
        operations++;
        expect(page).toContain(`| ${method.toUpperCase()} | \`${path}\` | ${op['x-organism-role']} |`);
      }
    }
    expect(page.match(/^\| (GET|POST|DELETE|PUT|PATCH) \|/gm)).toHaveLength(operations);
    expect(operations).toBeGreaterThan(30);
    // A route added to the document is a row of the page.
    doc.paths['/api/v1/new'] = { get: { summary: 'A new route', 'x-organism-role': 'admin', tags: ['x'] } };
    expect(renderHttpApiReference(JSON.stringify(doc))).toContain(
      '| GET | `/api/v1/new` | admin | A new route |',
    );
  });
});
