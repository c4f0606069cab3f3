/**
 * Whether a QT3 test case applies to the librarian (its dependencies against what the librarian
 * claims), and the query that sets up its environment with what a librarian_query caller has: the
 * prolog and documents stored in the librarian. The environment's documents are stored under
 * /db/qt3/...; the context item becomes `doc(path) ! (body)`, a `$var` source or a param a
 * `declare variable` in the prolog, namespaces `declare namespace`, decimal formats `declare
 * decimal-format`. What cannot be set up that way (schemas, collations, base URI, ...) makes the
 * case "not applicable".
 */
import { relative } from 'node:path';
import { codeOnly } from '../../librarian/embedded/unsupported.ts';
import type { Dependency, Environment, TestCase } from './catalog.ts';

/** The XQuery 3.1 spec tokens a case may name and still apply (XQ30+ includes 3.1; XQ30 alone not). */
const SPEC = new Set(['XQ10+', 'XQ30+', 'XQ31', 'XQ31+']);
/** Optional features the librarian claims (its embedded engine runs higher-order functions). */
const FEATURES = new Set(['higherOrderFunctions']);
/** What else it claims, per dependency type. */
const CLAIMS: Record<string, (value: string) => boolean> = {
  spec: (v) => v.split(/\s+/).some((t) => SPEC.has(t)),
  feature: (v) => FEATURES.has(v),
  language: (v) => v === 'en',
  'default-language': (v) => v === 'en',
  'xml-version': (v) => v.split(/\s+/).some((t) => t.startsWith('1.0')),
  'xsd-version': (v) => v === '1.0',
  calendar: (v) => v === 'AD' || v === 'ISO',
};

/** Why a case does not apply, or null when it does. */
export function notApplicable(tc: TestCase): string | null {
  for (const d of tc.dependencies) {
    const claimed = CLAIMS[d.type]?.(d.value) ?? false;
    if (claimed !== d.satisfied) return dependencyReason(d);
  }
  if (tc.missingEnvironment) return `environment ${tc.missingEnvironment} not found in the catalog`;
  const env = tc.environment;
  if (!env) return null;
  if (env.unsupported.length > 0) return env.unsupported[0]!;
  if (env.sources.some((s) => s.validation === 'strict' || s.validation === 'lax'))
    return 'schema-validated source';
  if (env.params.some((p) => p.select === null)) return 'environment param without a value';
  if (env.decimalFormats.some((d) => d === null)) return 'environment decimal-format with a prefixed name';
  return null;
}

function dependencyReason(d: Dependency): string {
  if (d.type === 'spec') return `spec ${d.value}`;
  return `${d.type} ${d.satisfied ? '' : 'not '}${d.value}`.replace(/\s+/g, ' ');
}

export interface Prepared {
  query: string;
  /** Documents to store first: librarian path -> file in the checkout. */
  documents: Map<string, string>;
}

/** The librarian path a checkout file is stored at: /db/qt3/<its path, one safe segment each>. */
export function documentPath(qt3Dir: string, file: string): string {
  const segments = relative(qt3Dir, file)
    .split(/[\\/]/)
    .filter((s) => s !== '' && s !== '.' && s !== '..')
    .map((s) => s.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\./, '_'));
  return `/db/qt3/${segments.join('/')}`;
}

function literal(text: string): string {
  return `"${text.replaceAll('"', '""').replaceAll('&', '&amp;')}"`;
}

const VERSION_DECL = /^\s*xquery\s+(?:version|encoding)\b[^;]*;/;
/** Prolog declarations of the first part (setters, namespaces, imports): variables must come after. */
const FIRST_PART =
  /\b(?:declare\s+(?:namespace|default\s+(?:element|function|collation|order|decimal-format)|decimal-format|boundary-space|base-uri|construction|ordering|copy-namespaces)|import\s+(?:schema|module))\b/g;

/** Splits a main module: [version decl, prolog, body], from its code with strings and comments blanked. */
export function splitQuery(query: string): [string, string, string] {
  const code = codeOnly(query);
  const version = VERSION_DECL.exec(code);
  const start = version ? version[0].length : 0;
  const end = code.lastIndexOf(';');
  if (end < start) return [query.slice(0, start), '', query.slice(start)];
  return [query.slice(0, start), query.slice(start, end + 1), query.slice(end + 1)];
}

/** The query with the environment set up in its own prolog and body. */
export function prepare(tc: TestCase, qt3Dir: string): Prepared {
  const env: Environment | null = tc.environment;
  const documents = new Map<string, string>();
  if (!env) return { query: tc.query, documents };
  let query = tc.query;
  for (const s of env.sources) {
    const path = documentPath(qt3Dir, s.file);
    documents.set(path, s.file);
    // A document a query reads by its URI: the URI as a string literal becomes the librarian path.
    if (s.uri) query = query.replaceAll(`"${s.uri}"`, `"${path}"`).replaceAll(`'${s.uri}'`, `'${path}'`);
  }
  let [version, prolog, body] = splitQuery(query);
  // A prefix the query declares itself is not declared again (XQST0033).
  const own = codeOnly(prolog);
  const namespaces = env.namespaces.filter((n) =>
    n.prefix === ''
      ? !/\bdeclare\s+default\s+element\s+namespace\b/.test(own)
      : !new RegExp(`\\bdeclare\\s+namespace\\s+${n.prefix}\\s*=`).test(own),
  );
  const setters = [
    ...namespaces.map((n) =>
      n.prefix === ''
        ? `declare default element namespace ${literal(n.uri)};`
        : `declare namespace ${n.prefix} = ${literal(n.uri)};`,
    ),
    ...(env.decimalFormats as string[]),
  ];
  const variables: string[] = [];
  const bind = (name: string, as: string | null, value: string) => {
    // A variable the query declares external gets its value there; others are declared.
    const external = new RegExp(
      `declare\\s+variable\\s+\\$${name.replace(/[.-]/g, '\\$&')}\\s*(as\\s+[^;]*?)?\\s*external\\s*(?::=[^;]*)?;`,
    );
    const m = external.exec(codeOnly(prolog));
    if (m) {
      const declared = `declare variable $${name} ${m[1] ?? (as ? `as ${as}` : '')} := ${value};`;
      prolog = prolog.slice(0, m.index) + declared + prolog.slice(m.index + m[0].length);
    } else {
      variables.push(`declare variable $${name}${as ? ` as ${as}` : ''} := ${value};`);
    }
  };
  for (const p of env.params) bind(p.name, p.as, p.select!);
  let context: string | null = null;
  for (const s of env.sources) {
    const path = literal(documentPath(qt3Dir, s.file));
    if (s.role === '.') context = path;
    else if (s.role.startsWith('$')) bind(s.role.slice(1), null, `doc(${path})`);
  }
  // Variables go after the last setter, namespace or import declaration of the query's own prolog.
  const code = codeOnly(prolog);
  let split = 0;
  for (const m of code.matchAll(FIRST_PART)) split = code.indexOf(';', m.index) + 1;
  const prologOut = [...setters, prolog.slice(0, split), ...variables, prolog.slice(split)]
    .filter((s) => s.trim() !== '')
    .join('\n');
  if (context) body = `doc(${context}) ! (\n${body}\n)`;
  return { query: `${version}${version ? '\n' : ''}${prologOut}${prologOut ? '\n' : ''}${body}`, documents };
}
