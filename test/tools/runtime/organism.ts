/** Temp organisms for runtime and CLI tests: an organism.yaml plus tool modules in a temp root. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { tempDir } from './helpers.ts';

export const QUIET_LISTENER = resolve(import.meta.dirname, '../../fixtures/tools/quiet.ts');

export interface TempOrganism {
  dir: string;
  /** Folder holding tools/ (passed as --root / options.root). */
  root: string;
  config: string;
  dataDir: string;
}

/** A tool module with no imports, so it loads from any folder. */
export function toolModule(name: string, body = `return { ok: true, tool: '${name}' };`, extra = ''): string {
  return `export default {
  name: '${name}',
  description: 'Test tool ${name}; answers a small object.',
  args: { type: 'object', properties: { text: { type: 'string' }, command: { type: 'string' } }, additionalProperties: false },
  readOnly: true,
  capability: 'read',
  source: 'native',${extra}
  async run(args) { ${body} },
};
`;
}

export async function writeTool(root: string, file: string, source: string): Promise<string> {
  await mkdir(join(root, 'tools'), { recursive: true });
  const path = join(root, 'tools', file);
  await writeFile(path, source);
  return path;
}

/**
 * Writes organism.yaml with listeners `researcher` (granted `researcherTools`) and `writer`
 * (granted `writerTools`), and the given tool modules under root/tools/.
 */
export async function tempOrganism(options: {
  tools: Record<string, string>;
  researcherTools: string[];
  writerTools?: string[];
  extraYaml?: string;
  researcherYaml?: string;
}): Promise<TempOrganism> {
  const dir = await tempDir('organism-runtime-');
  const root = join(dir, 'pkg');
  for (const [file, source] of Object.entries(options.tools)) await writeTool(root, file, source);
  const list = (tools: string[]) => `[${tools.join(', ')}]`;
  const yaml = `organism:
  name: tools-test
  data_dir: ./data
  workspace: .
listeners:
  - name: researcher
    description: Looks things up with the tools it is granted.
    handler: ${QUIET_LISTENER}
    payload: research
    tools: ${list(options.researcherTools)}
${options.researcherYaml ?? ''}
  - name: writer
    description: Writes things with the tools it is granted.
    handler: ${QUIET_LISTENER}
    payload: write
    tools: ${list(options.writerTools ?? [])}
${options.extraYaml ?? ''}`;
  const config = join(dir, 'organism.yaml');
  await writeFile(config, yaml);
  return { dir, root, config, dataDir: join(dir, 'data') };
}
