/** A server's inputSchema as the runtime checks it: everything but the server's regular expressions. */
import { describe, expect, it } from 'vitest';
import { compileRemote, withoutPatterns } from '../../src/mcp/client/schema.ts';

describe("checking arguments against a server's schema", () => {
  it('leaves patterns to the server: a catastrophic one is never run here', () => {
    const validate = compileRemote({
      type: 'object',
      properties: { s: { type: 'string', pattern: '^(a+)+$' } },
      patternProperties: { '^(b+)+$': { type: 'string' } },
      additionalProperties: false,
    });
    // With the pattern kept, a backtracking engine would take minutes on this (2^40 steps).
    expect(validate({ s: `${'a'.repeat(40)}!` })).toBe(true);
    expect(validate({ [`${'b'.repeat(40)}!`]: 'x' })).toBe(true);
    // Everything else is still checked.
    expect(validate({ s: 5 })).toBe(false);
  });

  it('removes the keyword, not a property that happens to be named pattern', () => {
    const schema = withoutPatterns({
      type: 'object',
      properties: {
        pattern: { type: 'string', pattern: 'x+' },
        items: { type: 'array', items: { pattern: 'y' } },
      },
      $defs: { d: { anyOf: [{ pattern: 'z' }] } },
      dependencies: { pattern: { properties: { q: { pattern: 'w' } } }, other: ['pattern'] },
    }) as Record<string, any>;
    expect(schema.dependencies.pattern.properties.q).toEqual({});
    expect(schema.dependencies.other).toEqual(['pattern']);
    expect(schema.properties.pattern).toEqual({ type: 'string' });
    expect(schema.properties.items.items).toEqual({});
    expect(schema.$defs.d.anyOf[0]).toEqual({});
    const validate = compileRemote({
      type: 'object',
      properties: { pattern: { type: 'string' } },
      required: ['pattern'],
    });
    expect(validate({})).toBe(false);
    expect(validate({ pattern: 'p' })).toBe(true);
  });
});
