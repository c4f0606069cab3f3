/**
 * A tool's arguments checked by the Standard Schema its module declared (zod, valibot...). What
 * the schema gives back (defaults filled, unknown keys stripped) is what the tool runs with; it
 * must still be plain JSON data, because the approval gate shows it, digests it and the audit log
 * keeps it: what a person approves is exactly what runs.
 */
import { runStandard } from '../schema/check.ts';
import type { StandardSchemaV1 } from '../schema/standard.ts';
import { copyJsonArgs } from './args-copy.ts';

export type StandardArgs = { value: unknown } | { refusal: string };

export async function checkStandardArgs(schema: StandardSchemaV1, args: unknown): Promise<StandardArgs> {
  const verdict = await runStandard(schema, args);
  if (!('value' in verdict)) return { refusal: verdict.issues.replace(/^payload: /, 'arguments: ') };
  try {
    return { value: copyJsonArgs(verdict.value ?? {}) };
  } catch (error) {
    return {
      refusal: `its args schema gave back a value that is not plain JSON data (${(error as Error).message}); keep transforms out of a tool's args schema`,
    };
  }
}
