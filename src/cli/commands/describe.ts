import { AGENT_TASK_SCHEMA } from '../../agent/definition.ts';
import { loadConfig } from '../../config/index.ts';
import { suggestion } from '../../config/suggest.ts';
import { UsageError } from '../../errors.ts';
import { schemaToExample, schemaToPrompt } from '../../xml/describe.ts';
import { schemaToXsd } from '../../xml/xsd.ts';
import { CONFIG_OPTION, parseCommandArgs } from '../args.ts';
import type { CommandIo } from '../io.ts';

export const summary = "print a listener's payload XSD, an example payload and its prompt fragment";

const HELP = `usage: organism describe <listener> [--example] [--config FILE]

Prints the payload schema as XSD, an example payload, and the prompt fragment agents see.

options:
      --example       print only the example payload, on one line (handy for 'organism send')
  -c, --config FILE   organism.yaml to read (default ./organism.yaml)
  -h, --help          show this help

examples:
  npx organism describe hello
  npx organism send --to hello "$(npx organism describe hello --example)"`;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { ...CONFIG_OPTION, example: { type: 'boolean' } });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const name = positionals[0];
  if (!name || positionals.length > 1) throw new UsageError('give one listener name');
  const { listeners } = await loadConfig(values.config);
  const listener = listeners.find((l) => l.config.name === name);
  if (!listener) {
    const names = listeners.map((l) => l.config.name);
    io.err(
      `organism describe: no listener named '${name}'${suggestion(name, names)}. Listeners: ${names.join(', ')}`,
    );
    return 1;
  }
  // An agent without a handler module accepts the runtime's task payload.
  const schema =
    listener.definition?.payload.schema ?? (listener.config.agent ? AGENT_TASK_SCHEMA : undefined);
  if (!schema) {
    io.err(`organism describe: '${name}' has no payload schema`);
    return 1;
  }
  const spec = { tag: listener.tag, schema };
  if (values.example) {
    io.out(schemaToExample(spec, { oneLine: true }));
    return 0;
  }
  const example = schemaToExample(spec);
  const description = listener.config.description || listener.definition?.description || '';
  io.out(
    `# ${name}: <${spec.tag}>\n\n## XSD\n${schemaToXsd(spec)}\n\n## Example\n${example}\n\n## Prompt\n${schemaToPrompt(spec, name, description)}`,
  );
  return 0;
}
