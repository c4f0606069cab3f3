/** librarian_delete: deletes one document, or a whole collection when asked explicitly. */
import { LibrarianError } from '../../src/errors.ts';
import type { ToolDefinition, ToolRunContext } from '../../src/tools/types.ts';
import type { DeleteResult } from '../backend.ts';
import { LIBRARIAN_WRITE_TOOL, librarianCall, PATH_ARG } from '../tool-support.ts';

export interface DeleteArgs {
  path: string;
  recursive?: boolean;
}

const deleteTool: ToolDefinition<DeleteArgs, DeleteResult> = {
  name: 'librarian_delete',
  description:
    'Delete one XML document from the librarian by its path. Deleting a collection (with every document and ' +
    'sub-collection in it) needs "recursive": true; without it a collection path is refused. The default ' +
    'collection itself cannot be deleted. ' +
    'Example: {"path": "notes/old.xml"} -> {"path": "/db/organism/notes/old.xml", "deleted": "document"}.',
  args: {
    type: 'object',
    properties: {
      path: PATH_ARG,
      recursive: {
        type: 'boolean',
        default: false,
        description: 'Allow deleting a collection and everything in it.',
      },
    },
    required: ['path'],
    additionalProperties: false,
  },
  ...LIBRARIAN_WRITE_TOOL,
  async run(args: DeleteArgs, ctx: ToolRunContext): Promise<DeleteResult> {
    const call = await librarianCall(ctx);
    const path = call.document(args.path);
    // One call should not wipe the organism's memory; what is in the default collection can go.
    if (path === call.defaultCollection) {
      throw new LibrarianError(
        'librarian.denied',
        `the default collection ${path} cannot be deleted; delete what is in it instead`,
        {
          path,
        },
      );
    }
    // A collection is deleted with all it holds, so the collection itself must be allowed too.
    if (args.recursive) call.policy.checkCollection(path);
    return call.backend.delete(path, { recursive: args.recursive === true, signal: ctx.signal });
  },
};

export default deleteTool;
