import { defineTool } from 'organism';
import { z } from 'zod';
import { search } from '../lib/articles.ts';

/** Searches the knowledge base: an own tool, offered to MCP clients through organism.yaml's mcp.tools. */
export default defineTool({
  name: 'kb_search',
  description:
    'Searches the help desk knowledge base and returns {"articles": [{"id", "title", "uri"}]}; read ' +
    'an article with resources/read on its uri. Use it before answering a customer question.',
  args: z.object({
    query: z.string().min(1).max(200).describe('Words to look for, e.g. "reset password".'),
    limit: z.number().int().min(1).max(10).default(3).describe('At most this many articles.'),
  }),
  readOnly: true,
  capability: 'read',
  source: 'native',
  async run(args) {
    return {
      articles: search(args.query, args.limit).map((a) => ({
        id: a.id,
        title: a.title,
        uri: `kb://articles/${a.id}`,
      })),
    };
  },
});
