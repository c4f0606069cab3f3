/** A user's tool that fails with its own dotted code: the result carries that code, not ToolError. */
import { describe, expect, it } from 'vitest';
import { OrganismError, type ToolDefinition } from '../../../src/index.ts';
import { EMPTY_ARGS, makeDispatcher } from './helpers.ts';

class QuotaError extends OrganismError<'mytool.quota'> {}

function failing(name: string, error: () => Error): ToolDefinition {
  return {
    name,
    description: 'Always fails; for tests.',
    args: EMPTY_ARGS,
    readOnly: true,
    capability: 'read',
    source: 'native',
    run: async () => {
      throw error();
    },
  };
}

describe('a user tool failing with its own code', () => {
  it('throwing OrganismError with a dotted code gives a result with that code', async () => {
    const tool = failing('quota', () => new OrganismError('mytool.quota', 'quota used up', { left: 0 }));
    const d = makeDispatcher([tool], [{ name: 'alice', tools: ['quota'] }]);
    expect(await d.call({ tool: 'quota', args: {}, listener: 'alice', thread: 't' })).toEqual({
      status: 'error',
      tool: 'quota',
      error: { code: 'mytool.quota', message: 'tool quota failed: quota used up' },
    });
  });

  it('a class extending OrganismError keeps its name and code', async () => {
    const error = new QuotaError('mytool.quota', 'over the limit');
    expect(error).toBeInstanceOf(OrganismError);
    expect(error.name).toBe('QuotaError');
    const d = makeDispatcher([failing('limited', () => error)], [{ name: 'alice', tools: ['limited'] }]);
    expect(await d.call({ tool: 'limited', args: {}, listener: 'alice', thread: 't' })).toMatchObject({
      status: 'error',
      error: { code: 'mytool.quota', message: 'tool limited failed: over the limit' },
    });
  });
});
