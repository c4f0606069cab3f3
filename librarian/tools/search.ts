/** librarian_search: full-text search over the librarian's documents, best match first. */
import type { ToolDefinition, ToolRunContext } from '../../src/tools/types.ts';
import type { SearchResult } from '../backend.ts';
import { COLLECTION_ARG, LIBRARIAN_READ_TOOL, librarianCall } from '../tool-support.ts';

export interface SearchArgs {
  query: string;
  collection?: string;
  num_results?: number;
}

export const DEFAULT_NUM_RESULTS = 10;

const searchTool: ToolDefinition<SearchArgs, SearchResult> = {
  name: 'librarian_search',
  description:
    'Full-text search over the XML documents in the librarian (a collection and everything below it). Give ' +
    'plain words; documents containing more of them, more often, rank higher. Returns the best matches first, ' +
    'each with its path (read it with librarian_get), a relevance score, and a snippet of text around the first ' +
    'hit with the hit in <mark>...</mark>. Common words such as "the" are ignored. If the result has a ' +
    '"fallback" note, no full-text index was available and ranking is by simple word counts. ' +
    'Example: {"query": "budget meeting", "num_results": 3} -> {"results": [{"path": "/db/organism/notes/a.xml", ' +
    '"score": 1.23, "snippet": "...the <mark>budget</mark> for next year..."}]}.',
  args: {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1, maxLength: 1000, description: 'Words to search for.' },
      collection: COLLECTION_ARG,
      num_results: {
        type: 'integer',
        minimum: 1,
        maximum: 100,
        default: DEFAULT_NUM_RESULTS,
        description: `How many results at most (default ${DEFAULT_NUM_RESULTS}).`,
      },
    },
    required: ['query'],
    additionalProperties: false,
  },
  ...LIBRARIAN_READ_TOOL,
  async run(args: SearchArgs, ctx: ToolRunContext): Promise<SearchResult> {
    const call = await librarianCall(ctx);
    const collection = call.collection(args.collection);
    const result = await call.backend.search(args.query, {
      collection,
      limit: args.num_results ?? DEFAULT_NUM_RESULTS,
      signal: ctx.signal,
    });
    // Below an allowed collection may lie one that is not; its documents are left out.
    return { ...result, results: result.results.filter((hit) => call.policy.allowsDocument(hit.path)) };
  },
};

export default searchTool;
