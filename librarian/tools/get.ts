/** librarian_get: reads one stored XML document by its path. */
import type { ToolDefinition, ToolRunContext } from '../../src/tools/types.ts';
import type { GetResult } from '../backend.ts';
import { LIBRARIAN_READ_TOOL, librarianCall, PATH_ARG } from '../tool-support.ts';

export interface GetArgs {
  path: string;
}

const getTool: ToolDefinition<GetArgs, GetResult> = {
  name: 'librarian_get',
  description:
    'Read one XML document from the librarian by its path, as returned by librarian_store, librarian_list or ' +
    'librarian_search. A path that does not exist gives the error "not found: <path>". ' +
    'Example: {"path": "notes/meeting-2024-05-01.xml"} -> {"path": "/db/organism/notes/meeting-2024-05-01.xml", "content": "<note>...</note>"}.',
  args: {
    type: 'object',
    properties: { path: PATH_ARG },
    required: ['path'],
    additionalProperties: false,
  },
  ...LIBRARIAN_READ_TOOL,
  async run(args: GetArgs, ctx: ToolRunContext): Promise<GetResult> {
    const call = await librarianCall(ctx);
    return call.backend.get(call.document(args.path), ctx.signal);
  },
};

export default getTool;
