/**
 * docs/reference/http-api.md: the routes table, read from the OpenAPI document the daemon serves
 * (docs/reference/http-api.json), and how to get the document and generate a client from it.
 */
import { referenceText } from '../server/openapi/reference.ts';
import { UPDATE_COMMAND } from './files.ts';

interface Operation {
  summary?: string;
  tags?: string[];
  'x-organism-role'?: string;
}

export function renderHttpApiReference(documentText = referenceText()): string {
  const doc = JSON.parse(documentText) as {
    info: { description: string };
    paths: Record<string, Record<string, Operation>>;
  };
  const out = [
    '# HTTP API',
    '',
    '<!-- Generated from the OpenAPI document (src/server/openapi/) by renderHttpApiReference',
    `     (src/reference/http-api.ts). Edit the operations there, then run: ${UPDATE_COMMAND} -->`,
    '',
    'The daemon serves its API on `server.host:server.port` (127.0.0.1:7777 unless organism.yaml says',
    'otherwise), the dashboard on the same port. The whole API is described by an **OpenAPI 3.1**',
    'document: [http-api.json](http-api.json) in this folder, and the same document from the running',
    'daemon at `GET /api/v1/openapi.json` (any token).',
    '',
    doc.info.description,
    '',
    '## Routes',
    '',
    'Role: the least a token needs (viewer < operator < admin); `public` needs no token.',
    '',
    '| method | path | role | what it does |',
    '| --- | --- | --- | --- |',
  ];
  const rows: Array<{ tag: string; line: string }> = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const summary = (op.summary ?? '').replace(/\|/g, '\\|');
      rows.push({
        tag: op.tags?.[0] ?? '',
        line: `| ${method.toUpperCase()} | \`${path}\` | ${op['x-organism-role'] ?? ''} | ${summary} |`,
      });
    }
  }
  // Grouped by tag, in the order the tags first appear; within a tag, in the document's order.
  const tags = [...new Set(rows.map((r) => r.tag))];
  for (const tag of tags) for (const row of rows) if (row.tag === tag) out.push(row.line);
  out.push(
    '',
    'Error answers and their codes: [errors.md](errors.md#http-api-answers).',
    '',
    '## Getting the document',
    '',
    'From a running daemon, with its local token (on its machine, in an `organism init` project):',
    '',
    '```sh norun',
    'curl -s -H "Authorization: Bearer $(cat .organism/api-token)" \\',
    '  http://127.0.0.1:7777/api/v1/openapi.json > organism-api.json',
    '```',
    '',
    'or from the package: `node_modules/organism/docs/reference/http-api.json`.',
    '',
    '## Generating a client',
    '',
    'Any OpenAPI 3.1 generator reads it. For TypeScript, `openapi-typescript` writes the types and',
    '`openapi-fetch` calls the API with them:',
    '',
    '```sh norun',
    'npm install openapi-fetch && npm install -D openapi-typescript',
    'npx openapi-typescript node_modules/organism/docs/reference/http-api.json -o src/organism-api.d.ts',
    '```',
    '',
    '```ts norun',
    "import createClient from 'openapi-fetch';",
    "import type { paths } from './organism-api.js';",
    '',
    'const api = createClient<paths>({',
    "  baseUrl: 'http://127.0.0.1:7777',",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a template literal of the example, shown as text
    '  headers: { authorization: `Bearer ${process.env.ORGANISM_TOKEN}` },',
    '});',
    "const { data, error } = await api.POST('/api/v1/call', {",
    "  body: { to: 'hello', payload: '<hello><name>Ada</name></hello>' },",
    '});',
    'console.log(error ? error.error.code : data);',
    '```',
    '',
    'For other languages, `openapi-generator-cli generate -i http-api.json -g python -o client/` (or',
    '`-g go`, `-g java`, ...). The token goes in the `Authorization: Bearer` header; the live event',
    'stream (`GET /api/v1/stream`) is a WebSocket, which generators leave to you.',
  );
  return `${out.join('\n')}\n`;
}
