/**
 * librarian_query: runs an XQuery 3.1 query over the librarian's documents. Values go in as
 * external variables, bound as values by the backend, never pasted into the query. Unless the
 * listener's tool_config sets allow_updates, the query is checked to be read-only before it runs.
 */
import type { ToolDefinition, ToolRunContext } from '../../src/tools/types.ts';
import type { QueryResult, Variables } from '../backend.ts';
import { COLLECTION_ARG, LIBRARIAN_READ_TOOL, librarianCall } from '../tool-support.ts';

export interface QueryArgs {
  query: string;
  collection?: string;
  variables?: Variables;
  max_results?: number;
}

export const DEFAULT_MAX_RESULTS = 100;

const scalar = { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] };

const queryTool: ToolDefinition<QueryArgs, QueryResult> = {
  name: 'librarian_query',
  description:
    'Run an XQuery 3.1 query over the XML documents in the librarian and get the results: elements as XML ' +
    'fragments, attributes, text and atomic values as strings, plus "hits", the total number of items. ' +
    "Read documents with collection('/db/organism/notes') (all documents in that collection and below) or " +
    "doc('/db/organism/notes/a.xml'); document-uri(root($node)) gives a node's document path. Pass any value " +
    'that comes from a user or another message as a variable, never inside the query text: declare it with ' +
    '"declare variable $name external;" and give {"variables": {"name": "value"}} (strings, numbers, booleans, ' +
    'or arrays of one of those as sequences). Queries are read-only unless allowed otherwise; use ' +
    'librarian_store / librarian_delete to change documents. Example: {"query": "declare variable $who external; ' +
    'collection(\'/db/organism/notes\')//note[author = $who]/title", "variables": {"who": "Ada"}} -> ' +
    '{"hits": 1, "results": ["<title>Budget</title>"]}.',
  args: {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1, maxLength: 100_000, description: 'The XQuery 3.1 query.' },
      collection: COLLECTION_ARG,
      variables: {
        type: 'object',
        description:
          'External variables by name (without $): string, number, boolean, or an array of one of those.',
        propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_.-]*$' },
        additionalProperties: { anyOf: [scalar, { type: 'array', items: scalar, maxItems: 1000 }] },
        maxProperties: 64,
      },
      max_results: {
        type: 'integer',
        minimum: 1,
        maximum: 1000,
        default: DEFAULT_MAX_RESULTS,
        description: `Return at most this many items (default ${DEFAULT_MAX_RESULTS}); "hits" still counts all.`,
      },
    },
    required: ['query'],
    additionalProperties: false,
  },
  ...LIBRARIAN_READ_TOOL,
  async run(args: QueryArgs, ctx: ToolRunContext): Promise<QueryResult> {
    const call = await librarianCall(ctx);
    const collection = call.collection(args.collection);
    // BaseX checks read-only itself, with its own parser and read permission (basex/backend.ts); the
    // fontoxpath-based check would refuse valid XQuery that fontoxpath cannot parse.
    if (!call.allowUpdates && call.backend.kind !== 'basex') {
      // The read-only check parses the query into a DOM (slimdom): loaded at the first query, not at start.
      const { assertReadOnly } = await import('../readonly.ts');
      assertReadOnly(args.query);
    }
    return call.backend.query(args.query, {
      collection,
      ...(args.variables ? { variables: args.variables } : {}),
      maxResults: args.max_results ?? DEFAULT_MAX_RESULTS,
      canRead: (path) => call.policy.allowsDocument(path),
      signal: ctx.signal,
    });
  },
};

export default queryTool;
