/**
 * What `organism init` writes into a folder: the plan (every file with its content) and the
 * package.json merge. Kept apart from the command so the plan can be checked before anything is
 * written: either every file is written, or none is.
 */
import { basename } from 'node:path';
import { UsageError } from '../../errors.ts';
import {
  ENV_EXAMPLE,
  GITIGNORE,
  HELLO_LISTENER,
  HELLO_TEST,
  ORGANISM_YAML,
  PROJECT_README,
  type ProjectFacts,
  TSCONFIG,
  WORD_COUNT_TOOL,
} from './templates.ts';

/** The files written besides package.json, by path relative to the project folder. */
export function projectFiles(facts: ProjectFacts): Array<[string, string]> {
  return [
    ['organism.yaml', ORGANISM_YAML(facts)],
    ['listeners/hello.ts', HELLO_LISTENER],
    ['tools/word-count.ts', WORD_COUNT_TOOL],
    ['test/hello.test.ts', HELLO_TEST],
    ['tsconfig.json', TSCONFIG],
    ['.env.example', ENV_EXAMPLE],
    ['.gitignore', GITIGNORE],
    ['README.md', PROJECT_README(facts)],
  ];
}

/** The project's name from its folder: lowercase letters, digits, - and _ (what npm and organism.name accept). */
export function projectName(folder: string): string {
  const name = basename(folder)
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '');
  return name === '' ? 'my-organism' : name;
}

/** What the generated package.json depends on, besides organism. */
export interface DependencyVersions {
  organism: string;
  /** The organism spec was given (--organism), so it replaces one package.json already has. */
  explicit: boolean;
  typescript: string;
  vitest: string;
  '@types/node': string;
  /** zod, which the hello listener's schemas are written with (a dependency: listeners load it at run time). */
  zod: string;
  /**
   * esbuild, which compiles the project's .ts listeners and tools when the daemon loads them: set
   * only when organism does not bring it as a dependency of its own (it is an optional peer), so
   * `npm start` works. Its postinstall is not needed (the binary comes from its platform package),
   * so the project's `allowScripts` denies it, which keeps npm from warning about it.
   */
  esbuild?: string;
}

/** The versions of Organism's own package: the dev tools it is built and tested with. */
export function versionsFrom(
  organismPackage: Record<string, any>,
  organismSpec?: string,
): DependencyVersions {
  const dev = (organismPackage.devDependencies ?? {}) as Record<string, string>;
  const own = (organismPackage.dependencies ?? {}) as Record<string, string>;
  const peer = (organismPackage.peerDependencies ?? {}) as Record<string, string>;
  // The version organism is tested with (its devDependency) over the peer range.
  const esbuild = own.esbuild === undefined ? (dev.esbuild ?? peer.esbuild ?? 'latest') : undefined;
  return {
    organism: organismSpec ?? `^${organismPackage.version}`,
    explicit: organismSpec !== undefined,
    typescript: dev.typescript ?? 'latest',
    vitest: dev.vitest ?? 'latest',
    '@types/node': dev['@types/node'] ?? 'latest',
    zod: dev.zod ?? 'latest',
    ...(esbuild === undefined ? {} : { esbuild }),
  };
}

const SCRIPTS = {
  start: 'organism run',
  // The daemon, reloaded on every save of organism.yaml, listeners, tools and their imports.
  dev: 'organism dev',
  // Before the tests: organism-env.d.ts from organism.yaml, then the type check, so a misspelled
  // tool or peer, or a wrong field, fails `npm test`.
  pretest: 'organism types && tsc --noEmit',
  test: 'vitest run',
  types: 'organism types',
  validate: 'organism validate',
} as const;

/** What `npm init -y` puts in scripts.test: a placeholder, not the user's own script. */
const NPM_PLACEHOLDER_TEST = /^echo "Error: no test specified" && exit 1$/;

export interface PackageMerge {
  json: Record<string, any>;
  /** One line per change to an existing package.json, or per thing kept that init would have set. */
  notes: string[];
}

/**
 * The project's package.json: a new one, or the existing one with what the project needs added.
 * An existing organism dependency (say, installed from a tarball) is kept unless --organism names
 * another; the user's own scripts are kept unless `force`; `"type"` becomes `"module"`, which the
 * listener and tool modules need.
 */
export function mergePackageJson(
  existing: Record<string, any> | undefined,
  facts: ProjectFacts,
  versions: DependencyVersions,
  force: boolean,
): PackageMerge {
  const notes: string[] = [];
  const json: Record<string, any> = existing
    ? structuredClone(existing)
    : { name: facts.name, version: '0.1.0', private: true };
  if (json.type !== 'module') {
    if (existing) notes.push(`"type" set to "module" (was ${JSON.stringify(json.type ?? 'commonjs')})`);
    json.type = 'module';
  }
  json.scripts ??= {};
  for (const [name, command] of Object.entries(SCRIPTS)) {
    const current = json.scripts[name] as string | undefined;
    if (current === undefined || current === command || force || NPM_PLACEHOLDER_TEST.test(current)) {
      json.scripts[name] = command;
    } else {
      notes.push(
        `kept your scripts.${name} (${JSON.stringify(current)}); init would set ${JSON.stringify(command)}`,
      );
    }
  }
  json.dependencies ??= {};
  // The organism already there is the one the user installed (a tarball, a git URL): only an
  // explicit --organism replaces it, never --force.
  const installed = json.dependencies.organism ?? json.devDependencies?.organism;
  if (versions.explicit || installed === undefined) {
    if (installed !== undefined && installed !== versions.organism) {
      notes.push(
        `dependency organism set to ${JSON.stringify(versions.organism)} (was ${JSON.stringify(installed)})`,
      );
    }
    if (json.devDependencies?.organism !== undefined) delete json.devDependencies.organism;
    json.dependencies.organism = versions.organism;
  }
  json.dependencies.zod ??= versions.zod;
  if (versions.esbuild !== undefined) {
    json.dependencies.esbuild ??= versions.esbuild;
    json.allowScripts ??= {};
    json.allowScripts.esbuild ??= false;
  }
  json.devDependencies ??= {};
  for (const name of ['typescript', 'vitest', '@types/node'] as const) {
    json.devDependencies[name] ??= versions[name];
  }
  return { json, notes };
}

/** The folder's package.json (its text, read by the caller). Throws UsageError naming it when it is not JSON. */
export function parsePackageJson(path: string, text: string): Record<string, any> {
  try {
    const json = JSON.parse(text) as unknown;
    if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error('not an object');
    return json as Record<string, any>;
  } catch (error) {
    throw new UsageError(
      `${path} is not a JSON object (${(error as Error).message}); fix or remove it first`,
    );
  }
}
