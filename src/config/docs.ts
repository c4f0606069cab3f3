/**
 * The organism.yaml reference (docs/reference/configuration.md), generated from organism.schema.json
 * so the two cannot drift (test/config/docs.test.ts fails when the file differs from this output).
 */
import type { JsonSchema } from '../xml/json-schema.ts';
import { WHEN_UNSET } from './schema.ts';

interface Row {
  key: string;
  type: string;
  default: string;
  description: string;
}

/** The page as Markdown: one heading per top-level section, one table row per key path. */
export function renderConfigReference(schema: JsonSchema): string {
  const out: string[] = [
    '# organism.yaml reference',
    '',
    '<!-- Generated from organism.schema.json by renderConfigReference (src/config/docs.ts).',
    '     Edit the schema, then run: npx tsx src/config/update-reference.ts -->',
    '',
    String(schema.description ?? ''),
    '',
    'Check a file with `organism validate [file]`. Editors that read JSON Schema complete and check',
    'organism.yaml against `organism.schema.json`.',
    '',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the ${VAR} syntax of organism.yaml, shown literally
    'Values may use `${VAR}` or `${VAR:-default}` from the environment or from a `.env` file beside',
    'organism.yaml. Secrets are never written in the file: a key ending in `_env` (`token_env`,',
    '`api_key_env`, `password_env`, `key_env`...) names the environment variable that holds the secret,',
    'and that variable may be in the `.env` too. Where both set a variable, the process environment',
    'wins; a reload reads the `.env` again. Relative paths are relative to the folder of organism.yaml;',
    '`<data_dir>` in a default stands for `organism.data_dir`.',
  ];
  const required = new Set((schema.required as string[] | undefined) ?? []);
  for (const [name, sub] of Object.entries(properties(schema))) {
    out.push('', `## \`${name}\``, '');
    const need = required.has(name)
      ? 'Required.'
      : unsetText(sub)
        ? `Optional; unset: ${unsetText(sub)}.`
        : 'Optional.';
    out.push(`${cell(String(sub.description ?? ''))} ${need}`, '');
    const rows: Row[] = [];
    const inner = isArray(sub) ? (sub.items as JsonSchema) : sub;
    collect(inner, isArray(sub) ? `${name}[]` : name, rows);
    // A section that is one value or a list of values (tool_modules) is its own single row.
    if (!isObject(inner))
      rows.push({ key: name, type: typeOf(sub), default: defaultOf(sub, false), description: '' });
    out.push('| key | type | default | description |', '| --- | --- | --- | --- |');
    for (const row of rows)
      out.push(`| \`${row.key}\` | ${row.type} | ${row.default} | ${cell(row.description)} |`);
  }
  return `${out.join('\n')}\n`;
}

function collect(schema: JsonSchema, prefix: string, rows: Row[]): void {
  const required = new Set((schema.required as string[] | undefined) ?? []);
  for (const [name, sub] of Object.entries(properties(schema))) {
    const key = `${prefix}.${name}`;
    rows.push({
      key,
      type: typeOf(sub),
      default: defaultOf(sub, required.has(name)),
      description: String(sub.description ?? ''),
    });
    if (isArray(sub) && isObject(sub.items as JsonSchema)) collect(sub.items as JsonSchema, `${key}[]`, rows);
    else if (isObject(sub)) {
      collect(sub, key, rows);
      const extra = sub.additionalProperties;
      if (typeof extra === 'object' && extra !== null) {
        const placeholder = `${key}.<${name.split('_')[0]}>`;
        const entry = extra as JsonSchema;
        rows.push({
          key: placeholder,
          type: typeOf(entry),
          default: defaultOf(entry, false),
          description: String(entry.description ?? ''),
        });
        collect(entry, placeholder, rows);
      }
    }
  }
}

function properties(schema: JsonSchema): Record<string, JsonSchema> {
  return (schema.properties as Record<string, JsonSchema> | undefined) ?? {};
}

const isArray = (s: JsonSchema): boolean => s.type === 'array';
const isObject = (s: JsonSchema | undefined): boolean => s?.type === 'object';

function typeOf(s: JsonSchema): string {
  if (Array.isArray(s.enum)) return s.enum.map((v) => `\`${String(v)}\``).join(' \\| ');
  if (isArray(s)) {
    const items = (s.items as JsonSchema | undefined) ?? {};
    return isObject(items) ? 'list of mappings' : `list of ${typeOf(items)}`;
  }
  if (isObject(s))
    return s.additionalProperties && typeof s.additionalProperties === 'object' ? 'map' : 'mapping';
  const type = String(s.type ?? 'any');
  if (type === 'integer' || type === 'number') {
    const min = s.minimum as number | undefined;
    const max = s.maximum as number | undefined;
    if (min !== undefined && max !== undefined) return `${type} ${min}–${max}`;
    if (min !== undefined) return `${type} ≥ ${min}`;
  }
  return type;
}

function defaultOf(s: JsonSchema, required: boolean): string {
  if (required) return '**required**';
  if ('default' in s) {
    const value = s.default;
    return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
  }
  const unset = unsetText(s);
  return unset ? `unset: ${cell(unset)}` : '';
}

function unsetText(s: JsonSchema): string | undefined {
  const text = s[WHEN_UNSET];
  return typeof text === 'string' ? text : undefined;
}

/** Text safe inside a Markdown table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}
