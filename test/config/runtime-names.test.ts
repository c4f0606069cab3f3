/**
 * Issue 25: the runtime's own state names (approvals, effects) are taken by no listener and no
 * allowed_namespaces entry. A listener named `approvals` or `effects`, or `allowed_namespaces:
 * [approvals]`, reached the approvals and effect records through the key_value_* tools; `organism
 * validate` accepted all three. Now each is refused with file:line and a clear reason.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatConfigIssue } from '../../src/errors.ts';
import { runCli } from '../helpers/daemon.ts';
import { issuesOf } from './helpers.ts';

const TOOLBOX = new URL('../../listeners/toolbox.ts', import.meta.url).pathname;
let file: string;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'organism-names-'));
  file = join(dir, 'organism.yaml');
  await writeFile(
    file,
    `organism:
  name: names
listeners:
  - name: approvals
    handler: ${TOOLBOX}
    payload: use-tool-a
    tools: [key_value_set]
  - name: effects
    handler: ${TOOLBOX}
    payload: use-tool-e
  - name: keeper
    handler: ${TOOLBOX}
    tools: [key_value_get, key_value_set]
    tool_config:
      key_value_get: { allowed_namespaces: [notes, effects] }
      key_value_set:
        allowed_namespaces: ["*", approvals]
`,
  );
});

describe("the runtime's own names", () => {
  it('are refused as listener names and as namespaces, each where it is written', async () => {
    const issues = await issuesOf(file);
    expect(issues.map((i) => formatConfigIssue(i).slice(file.length + 1))).toEqual([
      "4:11: listeners[0].name: listener name 'approvals' is one of the runtime's own names ('approvals', 'effects'); choose another name",
      "8:11: listeners[1].name: listener name 'effects' is one of the runtime's own names ('approvals', 'effects'); choose another name",
      "15:52: listeners[2].tool_config.key_value_get.allowed_namespaces[1]: namespace 'effects' is one of the runtime's own names ('approvals', 'effects'); no tool may use it",
      "17:35: listeners[2].tool_config.key_value_set.allowed_namespaces[1]: namespace 'approvals' is one of the runtime's own names ('approvals', 'effects'); no tool may use it",
    ]);
  });

  it('fail `organism validate`', async () => {
    const { code, stderr } = await runCli(['validate', file]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${file}:4:11: listeners[0].name: listener name 'approvals'`);
    expect(stderr).toContain(`${file}:17:35: listeners[2].tool_config.key_value_set.allowed_namespaces[1]`);
    expect(stderr).toContain('4 problems found');
  });
});
