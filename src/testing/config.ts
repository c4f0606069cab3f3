/**
 * testConfig(): an OrganismConfig for tests, built the way the daemon builds one. The given keys go
 * through the loader's own path (YAML document -> ajv against organism.schema.json with its
 * defaults -> paths resolved), so a test sees the same defaults a user's organism.yaml gets and
 * no test keeps a second, hand-copied set that drifts from the schema.
 */
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { finishConfig } from '../config/defaults.ts';
import { parseConfigText, toPlain } from '../config/read.ts';
import type { ListenerConfig, OrganismConfig } from '../config/types.ts';
import { validateAgainstSchema } from '../config/validate.ts';
import { ConfigError } from '../errors.ts';

/** Any part of organism.yaml, nested: only what the test cares about. */
export type DeepPartial<T> = T extends readonly (infer U)[]
  ? DeepPartial<U>[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/** organism.yaml as a test writes it: every section optional, listeners by name. */
export type TestConfigInput = DeepPartial<Omit<OrganismConfig, 'file' | 'listeners'>> & {
  listeners?: Array<DeepPartial<ListenerConfig> & { name: string }>;
};

export interface TestConfigOptions {
  /**
   * The folder organism.yaml would be in: relative paths (data_dir `.organism`, the workspace...)
   * resolve against it. Default: a fresh path under the OS temp folder, not created until
   * something writes there, so two tests never share a data dir by accident.
   */
  dir?: string;
}

/**
 * Applies organism.schema.json's defaults to `input` (deep: `{ bus: { max_concurrent: 1 } }` keeps
 * every other bus default) and returns the config the runtime would run with. `organism.name`
 * defaults to `test` and `listeners` to none (the schema asks for one; a test may have none). Throws ConfigError (`config.invalid`) naming every
 * key the schema refuses. Only the schema is checked, not peers or handler modules: a test hands
 * its listener definitions over directly.
 */
export function testConfig(input: TestConfigInput = {}, options: TestConfigOptions = {}): OrganismConfig {
  const dir = options.dir ?? join(tmpdir(), `organism-test-${randomUUID()}`);
  const file = join(dir, 'organism.yaml');
  const wanted = merge({ organism: { name: 'test' } }, input as Record<string, unknown>);
  // The schema wants at least one listener; a test of a tool or a store may have none, so one
  // stands in for the check and is taken out again.
  const none = !Array.isArray(wanted.listeners) || wanted.listeners.length === 0;
  if (none) wanted.listeners = [{ name: 'placeholder', agent: true }];
  // Through a YAML document, as the loader reads a file: the same validator, defaults and messages.
  const parsed = parseConfigText(stringify(wanted), 'testConfig()');
  if (!parsed.source) throw new ConfigError(parsed.issues);
  const data = toPlain(parsed.source) as Record<string, unknown>;
  const issues = validateAgainstSchema(data, parsed.source);
  // Lines of the generated YAML would mean nothing to the test; the key path says where.
  if (issues.length > 0) throw new ConfigError(issues.map(({ line: _l, column: _c, ...issue }) => issue));
  if (none) data.listeners = [];
  return finishConfig(data, file, dir);
}

/** `over` laid onto `base`, mappings merged key by key; lists and scalars in `over` replace. */
function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    const under = out[key];
    out[key] = isMapping(value) && isMapping(under) ? merge(under, value) : value;
  }
  return out;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
