import { defineResource } from 'organism';
import { ARTICLES } from '../lib/articles.ts';

/** Each article as a resource, kb://articles/{id}, with its ids offered as completions. */
export default defineResource({
  uriTemplate: 'kb://articles/{id}',
  name: 'article',
  description: 'One article of the help desk knowledge base, as Markdown.',
  mimeType: 'text/markdown',
  complete: {
    id: (typed: string) => ARTICLES.map((a) => a.id).filter((id) => id.startsWith(typed)),
  },
  read: ({ id }) => {
    const article = ARTICLES.find((a) => a.id === id);
    if (!article) throw new Error(`no article '${id}'; kb_search lists them`);
    return `# ${article.title}\n\n${article.text}\n`;
  },
});
