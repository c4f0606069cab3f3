/**
 * librarian_store: stores (or replaces) one XML document in the librarian. The content is checked
 * for well-formedness first; a malformed document is refused with its line and column.
 */
import type { ToolDefinition, ToolRunContext } from '../../src/tools/types.ts';
import type { StoreResult } from '../backend.ts';
import { COLLECTION_ARG, LIBRARIAN_WRITE_TOOL, librarianCall } from '../tool-support.ts';

export interface StoreArgs {
  collection?: string;
  document_name: string;
  content: string;
}

const storeTool: ToolDefinition<StoreArgs, StoreResult> = {
  name: 'librarian_store',
  description:
    'Store an XML document in the librarian (an XML document database), replacing any document with the same ' +
    'name in that collection. Use it to keep notes, records or results you want to query or search later. ' +
    'The content must be one well-formed XML document (one root element, no DOCTYPE); malformed XML is refused ' +
    'with the line and column of the problem. Collections are created as needed. ' +
    'Example: {"collection": "notes", "document_name": "meeting-2024-05-01.xml", "content": "<note><title>Budget</title><body>...</body></note>"} ' +
    '-> {"path": "/db/organism/notes/meeting-2024-05-01.xml"}.',
  args: {
    type: 'object',
    properties: {
      collection: COLLECTION_ARG,
      document_name: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description: 'File name of the document in the collection, e.g. "a.xml" (no "/").',
      },
      content: { type: 'string', minLength: 1, description: 'The XML document.' },
    },
    required: ['document_name', 'content'],
    additionalProperties: false,
  },
  ...LIBRARIAN_WRITE_TOOL,
  async run(args: StoreArgs, ctx: ToolRunContext): Promise<StoreResult> {
    const call = await librarianCall(ctx);
    const path = call.documentIn(args.collection, args.document_name);
    return call.backend.store(path, args.content, ctx.signal);
  },
};

export default storeTool;
