/**
 * Reads a QT3 checkout (w3c/qt3tests): catalog.xml, the test sets chosen by name, their
 * environments (the catalog's shared ones and each set's own) and test cases, into plain objects.
 * Nothing from the checkout is copied: files are read where the user keeps them.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Element, parseXmlDocument } from 'slimdom';

const FOTS = 'http://www.w3.org/2010/09/qt-fots-catalog';

export interface Dependency {
  type: string;
  value: string;
  /** false: the case applies only where the feature is NOT supported. */
  satisfied: boolean;
}

export interface Source {
  /** '.' (the context item), '$name' (a variable), or '' (only reachable by its uri through doc()). */
  role: string;
  /** Absolute path of the document in the checkout. */
  file: string;
  uri: string;
  validation: string;
}

export interface Param {
  name: string;
  select: string | null;
  as: string | null;
  declared: boolean;
}

export interface Environment {
  name: string;
  sources: Source[];
  params: Param[];
  namespaces: { prefix: string; uri: string }[];
  /** `declare [default] decimal-format ...;` for each <decimal-format>, or null when one cannot be written. */
  decimalFormats: (string | null)[];
  /** Parts of the environment the librarian has no way to set up (schema, collation, ...). */
  unsupported: string[];
}

export interface TestCase {
  set: string;
  name: string;
  dependencies: Dependency[];
  environment: Environment | null;
  /** An environment ref that named nothing: the case is reported, not run. */
  missingEnvironment?: string;
  query: string;
  result: Element;
}

export interface TestSet {
  name: string;
  cases: TestCase[];
}

function children(el: Element, localName: string): Element[] {
  return el.children.filter((c) => c.localName === localName && c.namespaceURI === FOTS);
}

function load(path: string): Element {
  return parseXmlDocument(readFileSync(path, 'utf8')).documentElement!;
}

function dependencies(el: Element): Dependency[] {
  return children(el, 'dependency').map((d) => ({
    type: d.getAttribute('type') ?? '',
    value: d.getAttribute('value') ?? '',
    satisfied: d.getAttribute('satisfied') !== 'false',
  }));
}

/** The attributes of a <decimal-format> as a prolog declaration (an unprefixed name only). */
function decimalFormat(el: Element): string | null {
  const name = el.getAttribute('name');
  if (name !== null && !/^[A-Za-z_][\w.-]*$/.test(name)) return null;
  const props = el.attributes
    .filter((a) => a.name !== 'name' && !a.name.startsWith('xmlns'))
    .map((a) => `${a.localName}="${a.value.replaceAll('"', '""').replaceAll('&', '&amp;')}"`);
  return `declare ${name === null ? 'default decimal-format' : `decimal-format ${name}`} ${props.join(' ')};`;
}

const UNSUPPORTED_PARTS = [
  'schema',
  'collation',
  'static-base-uri',
  'resource',
  'collection',
  'context-item',
  'module',
];

export function environment(el: Element, baseDir: string): Environment {
  const unsupported = UNSUPPORTED_PARTS.filter((p) => children(el, p).length > 0).map(
    (p) => `environment ${p}`,
  );
  return {
    name: el.getAttribute('name') ?? '(inline)',
    sources: children(el, 'source').map((s) => ({
      role: s.getAttribute('role') ?? '',
      file: join(baseDir, s.getAttribute('file') ?? ''),
      uri: s.getAttribute('uri') ?? '',
      validation: s.getAttribute('validation') ?? 'skip',
    })),
    params: children(el, 'param').map((p) => ({
      name: p.getAttribute('name') ?? '',
      select: p.getAttribute('select'),
      as: p.getAttribute('as'),
      declared: p.getAttribute('declared') === 'true',
    })),
    namespaces: children(el, 'namespace').map((n) => ({
      prefix: n.getAttribute('prefix') ?? '',
      uri: n.getAttribute('uri') ?? '',
    })),
    decimalFormats: children(el, 'decimal-format').map(decimalFormat),
    unsupported,
  };
}

export interface Catalog {
  dir: string;
  /** Test set name -> its file, in catalog order. */
  sets: Map<string, string>;
  environments: Map<string, Environment>;
}

export function readCatalog(dir: string): Catalog {
  const root = load(join(dir, 'catalog.xml'));
  const environments = new Map<string, Environment>();
  for (const e of children(root, 'environment'))
    environments.set(e.getAttribute('name')!, environment(e, dir));
  const sets = new Map<string, string>();
  for (const s of children(root, 'test-set'))
    sets.set(s.getAttribute('name')!, join(dir, s.getAttribute('file')!));
  return { dir, sets, environments };
}

export function readTestSet(catalog: Catalog, name: string): TestSet {
  const file = catalog.sets.get(name);
  if (!file) throw new Error(`qt3: the catalog has no test set named ${name}`);
  const root = load(file);
  const baseDir = dirname(file);
  const local = new Map<string, Environment>();
  for (const e of children(root, 'environment')) local.set(e.getAttribute('name')!, environment(e, baseDir));
  const setDependencies = dependencies(root);
  const cases = children(root, 'test-case').map((tc): TestCase => {
    const envEl = children(tc, 'environment')[0];
    let env: Environment | null = null;
    let missingEnvironment: string | undefined;
    const ref = envEl?.getAttribute('ref');
    if (ref) {
      env = local.get(ref) ?? catalog.environments.get(ref) ?? null;
      if (!env) missingEnvironment = ref;
    } else if (envEl) {
      env = environment(envEl, baseDir);
    }
    const test = children(tc, 'test')[0];
    const testFile = test?.getAttribute('file');
    return {
      set: name,
      name: tc.getAttribute('name') ?? '',
      dependencies: [...setDependencies, ...dependencies(tc)],
      environment: env,
      ...(missingEnvironment ? { missingEnvironment } : {}),
      query: testFile ? readFileSync(join(baseDir, testFile), 'utf8') : (test?.textContent ?? ''),
      result: children(tc, 'result')[0]!,
    };
  });
  return { name, cases };
}

/** Test sets matching a name or a `prefix-*` pattern, in catalog order. */
export function selectSets(catalog: Catalog, patterns: readonly string[]): string[] {
  const names = [...catalog.sets.keys()];
  const chosen: string[] = [];
  for (const pattern of patterns) {
    const matches = pattern.endsWith('*')
      ? names.filter((n) => n.startsWith(pattern.slice(0, -1)))
      : names.filter((n) => n === pattern);
    if (matches.length === 0) throw new Error(`qt3: no test set in the catalog matches ${pattern}`);
    for (const m of matches) if (!chosen.includes(m)) chosen.push(m);
  }
  return chosen;
}

export function elementChildren(el: Element): Element[] {
  return el.children.filter((c) => c.namespaceURI === FOTS);
}
