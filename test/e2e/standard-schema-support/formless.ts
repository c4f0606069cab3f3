import { defineListener, type StandardSchemaV1 } from '../../../src/index.ts';

/** A Standard Schema with no JSON Schema form and no adapter for its vendor: refused at load. */
const formless: StandardSchemaV1<{ x: string }> = {
  '~standard': { version: 1, vendor: 'acme', validate: (value) => ({ value: value as { x: string } }) },
};

export default defineListener({
  name: 'formless',
  payload: { tag: 'formless', schema: formless },
  handler: () => undefined,
});
