/** The listeners of the call and scripting tests: the hello-world chain, and quote, broken and slow. */
import { fileURLToPath } from 'node:url';
import { chainYaml } from '../../server/helpers.ts';

const SUPPORT = fileURLToPath(new URL('./', import.meta.url));

export const CALL_LISTENERS = `${chainYaml()}  - name: quote
    handler: ${SUPPORT}quote.ts
  - name: broken
    handler: ${SUPPORT}broken.ts
  - name: slow
    handler: ${SUPPORT}slow.ts
`;
