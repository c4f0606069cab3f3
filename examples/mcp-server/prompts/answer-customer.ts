import { definePrompt } from 'organism';

/** A prompt MCP clients list and get: how to answer a customer with the knowledge base. */
export default definePrompt({
  name: 'answer_customer',
  description: 'Asks the model to answer a customer question from the knowledge base.',
  arguments: [
    { name: 'question', description: "The customer's question", required: true },
    {
      name: 'tone',
      description: 'How to answer',
      complete: (typed) => ['friendly', 'formal'].filter((t) => t.startsWith(typed)),
    },
  ],
  get: ({ question, tone }) =>
    `Answer this customer question in a ${tone ?? 'friendly'} tone. Search the knowledge base with ` +
    `kb_search first and quote the article you used.\n\nQuestion: ${question}`,
});
