/**
 * The files `organism init` writes: a small, working project (one listener, one tool of its own,
 * a test, a plain NodeNext tsconfig). Kept as text here, not as files beside the package, so they
 * ship inside the compiled CLI with nothing to find at run time. Every file is written as a user
 * would write it: imports from 'organism', relative imports with `.js` as NodeNext expects.
 */

export interface ProjectFacts {
  /** The organism's name (organism.name, the package name). */
  name: string;
}

export const ORGANISM_YAML = (
  facts: ProjectFacts,
) => `# yaml-language-server: $schema=./node_modules/organism/organism.schema.json
# Your organism: \`npm run dev\` runs it, reloaded on every save (\`npm start\`: without reloads);
# \`npm run validate\` checks this file. Every key with its default:
# node_modules/organism/docs/reference/configuration.md
organism:
  name: ${facts.name}
  data_dir: ./.organism        # history, audit log, embedded stores (git-ignored)

server:
  host: 127.0.0.1
  port: 7777

# Your own tools: every .ts/.js file in these folders (or these files) adds to the built-in tools.
tool_modules: [./tools]

listeners:
  - name: hello
    handler: ./listeners/hello.ts
    tools: [word_count]        # tools/word-count.ts; a listener gets only the tools granted here
`;

export const HELLO_LISTENER = `import { defineListener } from 'organism';
import { z } from 'zod';

/** What hello answers. An interface works as well as a type alias. */
export interface Greeting {
  text: string;
  words: number;
}

/**
 * Greets someone by name and counts the words of the greeting with the project's own word_count
 * tool (tools/word-count.ts). The payload's type comes from its zod schema; \`name: 'hello'\` ties
 * the module to its organism.yaml entry, so (with organism-env.d.ts, which \`organism types\`
 * writes before each \`npm test\`) ctx.tools.call takes only the tools organism.yaml grants hello.
 * The tool call goes through Organism's dispatcher: granted, its arguments checked, the call and
 * its result recorded in the thread.
 */
export default defineListener({
  name: 'hello',
  description: 'Greets someone by name and says how many words the greeting has.',
  payload: {
    tag: 'hello',
    schema: z.object({ name: z.string().min(1).max(200).describe('Who to greet.') }),
  },
  response: {
    tag: 'greeting',
    schema: z.object({
      text: z.string().describe('The greeting.'),
      words: z.number().int().describe('How many words it has.'),
    }),
  },
  async handler(payload, ctx) {
    const text = \`Hello, \${payload.name}!\`;
    const counted = await ctx.tools.call('word_count', { text });
    // A refused or failed call is a result, not an exception: say why and stop here.
    if (counted.status !== 'ok') throw new Error(\`word_count: \${counted.error.message}\`);
    if (counted.truncated) throw new Error('word_count: its result was cut at max_result_bytes');
    const greeting: Greeting = { text, words: counted.value.words };
    ctx.log.info('greeted', { name: payload.name, words: greeting.words });
    return ctx.respond(greeting);
  },
});
`;

export const WORD_COUNT_TOOL = `import { defineTool } from 'organism';

/** What word_count returns. */
export interface WordCount {
  words: number;
}

/**
 * A tool of this project: one file in tools/ default-exporting defineTool(...). organism.yaml's
 * \`tool_modules: [./tools]\` adds it to the built-in tools; a listener uses it once it is granted
 * (\`tools: [word_count]\`). \`run\`'s arguments are typed by \`args\` (a JSON Schema, as here, or a
 * zod schema). The runtime checks the arguments before \`run\`, applies the listener's tool_config
 * (timeout_ms, rate_limit, max_result_bytes) and audits each call, so \`run\` only does the work.
 */
export default defineTool({
  name: 'word_count',
  description:
    'Counts the words in a text (runs of characters between spaces) and returns {"words": n}. ' +
    'Use it when an exact word count matters.',
  args: {
    type: 'object',
    properties: {
      text: { type: 'string', maxLength: 100000, description: 'The text whose words to count.' },
    },
    required: ['text'],
    additionalProperties: false,
  },
  readOnly: true,
  capability: 'read',
  source: 'native',
  async run(args): Promise<WordCount> {
    return { words: args.text.split(/\\s+/).filter((word) => word.length > 0).length };
  },
});
`;

export const HELLO_TEST = `import { testListener } from 'organism/testing';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import hello from '../listeners/hello.js';
import wordCount from '../tools/word-count.js';

// The listener runs on a real in-process bus; its granted tool runs through the real dispatcher.

describe('hello', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('greets by name and counts the words with word_count', async () => {
    const listener = await testListener(hello, { name: 'hello', tools: [wordCount] });
    close = () => listener.close();
    const replies = await listener.send({ name: 'Ada Lovelace' });
    expect(replies.map((r) => r.tag)).toEqual(['greeting']);
    expect(replies[0]?.payload).toEqual({ text: 'Hello, Ada Lovelace!', words: 3 });
  });

  it('refuses a payload without a name, before the handler runs', async () => {
    const listener = await testListener(hello, { name: 'hello', tools: [wordCount] });
    close = () => listener.close();
    await expect(listener.send('<hello></hello>')).rejects.toThrow('field "name"');
  });

  // Checked by tsc (npm test runs it first): the handler's payload type is the zod schema's.
  it('takes the payload type from its zod schema', () => {
    expectTypeOf<Parameters<typeof hello.handler>[0]>().toEqualTypeOf<{ name: string }>();
  });
});

describe('word_count', () => {
  it('counts runs of non-space characters', async () => {
    const ctx = {} as Parameters<typeof wordCount.run>[1];
    expect(await wordCount.run({ text: '  one two\\tthree\\n' }, ctx)).toEqual({ words: 3 });
  });
});
`;

export const TSCONFIG = `{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "noEmit": true,
    "skipLibCheck": true
  },
  "include": ["listeners", "tools", "test", "organism-env.d.ts"]
}
`;

export const ENV_EXAMPLE = `# Copy to .env beside organism.yaml and fill in; never commit .env.
# A value here fills \${VAR} in organism.yaml and every *_env key (token_env, api_key_env,
# password_env...). The process environment wins over .env.

# The API token the organism CLI sends to the daemon (see auth.tokens in organism.yaml); on the
# daemon's machine none is needed: the CLI finds the local token in the data dir.
# ORGANISM_TOKEN=

# Where the CLI finds a daemon that is not the one described by ./organism.yaml:
# ORGANISM_URL=http://127.0.0.1:7777

# A model provider's key, named by llm.backends[].api_key_env, for LLM agents:
# ANTHROPIC_API_KEY=
`;

export const GITIGNORE = `node_modules/
.organism/
.env
*.log
`;

export const PROJECT_README = (facts: ProjectFacts) => `# ${facts.name}

An [Organism](https://www.npmjs.com/package/organism) project: listeners that exchange XML messages
on a bus, with tools granted to them in \`organism.yaml\`.

\`\`\`sh
npm install
npm run dev            # runs the organism on http://127.0.0.1:7777, reloaded on every save
npm start              # runs it as a service would (no reload on save)
npm test               # tests the listener with vitest and organism/testing
npm run validate       # checks organism.yaml, the listener and tool modules and the grants
\`\`\`

In another terminal, while it runs:

\`\`\`sh
npx organism send --to hello '<hello><name>Ada</name></hello>' --wait
\`\`\`

prints the thread: \`hello\` calls \`word_count\`, gets \`{"words": 2}\` back, and answers with
\`<greeting>\`.

- \`listeners/hello.ts\`: a listener (\`defineListener\`); add more and list them under \`listeners:\`.
- \`tools/word-count.ts\`: a tool of your own; every file in \`tools/\` is one (\`tool_modules\`), and a
  listener uses it once \`organism.yaml\` grants it.
- \`test/hello.test.ts\`: runs the listener on a real in-process bus (\`testListener\`).
- \`.env.example\`: copy to \`.env\` for secrets; \`\${VAR}\` and every \`*_env\` key read it.

Signing is optional: \`npx organism tools sign\` writes \`tools.manifest.json\` (commit it), after
which a changed tool module is refused until it is signed again. The key pair stays in
\`.organism/\`; where the organism runs from a fresh checkout, set \`tools.public_key_env\` in
organism.yaml and put the public key \`sign\` prints in that variable (\`.env\` will do).

## Docs

Organism's docs come with the package, in \`node_modules/organism/docs/\`:

- [Getting started](node_modules/organism/docs/guide/project.md): this project, piece by piece, and
  the guide from there (listeners, tools, agents, approval, running as a service)
- [Testing](node_modules/organism/docs/guide/testing.md): the test kit \`organism/testing\`
- [organism.yaml reference](node_modules/organism/docs/reference/configuration.md): every key with
  its default; the [CLI](node_modules/organism/docs/reference/cli.md) and the
  [HTTP API](node_modules/organism/docs/reference/http-api.md) beside it
- [All the docs](node_modules/organism/docs/README.md), by reader
`;
