/** librarian_list: the documents and sub-collections directly in one collection. */
import type { ToolDefinition, ToolRunContext } from '../../src/tools/types.ts';
import type { ListResult } from '../backend.ts';
import { COLLECTION_ARG, LIBRARIAN_READ_TOOL, librarianCall } from '../tool-support.ts';

export interface ListArgs {
  collection?: string;
}

const listTool: ToolDefinition<ListArgs, ListResult> = {
  name: 'librarian_list',
  description:
    'List what is directly in one librarian collection: its sub-collections and its documents, each with its ' +
    'full path, sorted by name. Without a collection, lists the default collection. ' +
    'Example: {"collection": "notes"} -> {"collection": "/db/organism/notes", "collections": [{"name": "2024", "path": "/db/organism/notes/2024"}], ' +
    '"documents": [{"name": "a.xml", "path": "/db/organism/notes/a.xml"}]}.',
  args: {
    type: 'object',
    properties: { collection: COLLECTION_ARG },
    additionalProperties: false,
  },
  ...LIBRARIAN_READ_TOOL,
  async run(args: ListArgs, ctx: ToolRunContext): Promise<ListResult> {
    const call = await librarianCall(ctx);
    const collection = call.collection(args.collection);
    const listing = await call.backend.list(collection, ctx.signal);
    // A sub-collection outside allowed_collections is not shown; its documents could not be read anyway.
    return {
      ...listing,
      collections: listing.collections.filter((c) => call.policy.allowsCollection(c.path)),
    };
  },
};

export default listTool;
