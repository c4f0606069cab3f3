/** The refusal a librarian query is expected to end in (an OrganismError), or a failure saying it answered. */
import { expect } from 'vitest';
import { OrganismError } from '../../src/errors.ts';

export async function refusalOf(
  run: (query: string) => Promise<unknown>,
  query: string,
): Promise<OrganismError> {
  try {
    await run(query);
  } catch (error) {
    expect(error).toBeInstanceOf(OrganismError);
    return error as OrganismError;
  }
  throw new Error(`expected ${query} to be refused`);
}
