/**
 * `organism validate` (the real CLI) on an agent's own `llm:` settings: a backend name that is not
 * there (with did-you-mean), one two backends answer to, duplicate backend names, a model that
 * would go to backends of different providers, `llm:` on a code listener, and a script file that
 * cannot be played, each with its file:line:column; and a file using them right passes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers/daemon.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'organism-llm-check-'));
  await writeFile(join(dir, 'triage.script.yaml'), 'name: triage\nscripts:\n  - turns:\n      - text: ok\n');
  await writeFile(join(dir, 'broken.script.yaml'), 'scripts:\n  - turns: []\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function validate(yaml: string) {
  const file = join(dir, 'organism.yaml');
  await writeFile(file, yaml);
  const { code, stdout, stderr } = await runCli(['validate', file]);
  return { code, file, stdout, lines: stderr.trim().split('\n') };
}

const HEAD = `organism:
  name: llm-check
llm:
  backends:
    - name: scripts
      provider: scripted
      script: ./triage.script.yaml
    - provider: anthropic
      api_key_env: ANTHROPIC_API_KEY
    - provider: openai
      api_key_env: OPENAI_API_KEY
    - provider: openai
      api_key_env: OTHER_OPENAI_KEY
listeners:
`;

describe('organism validate: listeners[].llm', () => {
  it('names each mistake with its file:line:column and a did-you-mean', async () => {
    const { code, file, lines } = await validate(`${HEAD}  - name: triage
    agent: true
    description: Sorts requests.
    llm:
      backend: scriptd
  - name: writer
    agent: true
    description: Drafts replies.
    llm:
      backend: openai
  - name: summarizer
    agent: true
    description: Summarizes.
    llm:
      model: claude-haiku-4-5
      script: ./missing.script.yaml
  - name: echo
    handler: ${join(REPO_ROOT, 'listeners/printer.ts')}
    llm:
      temperature: 0.5
  - name: reviewer
    agent: true
    description: Reviews.
    llm:
      backend: scripts
      script: ./broken.script.yaml
`);
    expect(code).toBe(1);
    expect(lines).toEqual([
      `${file}:19:16: listeners[0].llm.backend: backend 'scriptd' names no backend in llm.backends ('scripts', 'anthropic', 'openai') — did you mean 'scripts'?`,
      `${file}:24:16: listeners[1].llm.backend: backend 'openai' is ambiguous: llm.backends[2] and llm.backends[3] are all called that; give each its own name (llm.backends[].name)`,
      `${file}:29:14: listeners[2].llm.model: this model would be sent to backends of 2 providers (anthropic, openai); choose one with llm.backend`,
      expect.stringMatching(
        new RegExp(
          `^${esc(file)}:30:15: listeners\\[2\\]\\.llm\\.script: cannot read the script ${esc(join(dir, 'missing.script.yaml'))}: ENOENT`,
        ),
      ),
      `${file}:33:5: listeners[3].llm: llm: sets the model of an agent the runtime runs (agent: true, no handler); 'echo' is not one`,
      `${file}:40:15: listeners[4].llm.script: ${join(dir, 'broken.script.yaml')}: scripts[0].turns: expected turns`,
      `${file}: 6 problems found`,
    ]);
  });

  it('refuses two backends with one name', async () => {
    const { code, file, lines } = await validate(`organism:
  name: llm-check
llm:
  backends:
    - name: fast
      provider: scripted
    - name: fast
      provider: scripted
listeners:
  - name: triage
    agent: true
    description: Sorts requests.
`);
    expect(code).toBe(1);
    expect(lines[0]).toBe(
      `${file}:7:13: llm.backends[1].name: duplicate backend name 'fast' (also llm.backends[0], line 5)`,
    );
  });

  it('passes a file whose agents name their own backend, model, sampling and script', async () => {
    const { code, stdout, lines } = await validate(`${HEAD}  - name: triage
    agent: true
    description: Sorts requests.
    llm:
      backend: anthropic
      model: claude-haiku-4-5
      temperature: 0
      top_p: 0.9
      max_tokens: 512
      retries: 1
      script: ./triage.script.yaml
`);
    expect({ code, lines }).toEqual({ code: 0, lines: [''] });
    expect(stdout).toContain('ok:');
  });
});

describe('organism validate: provider mcp-sampling', () => {
  it('passes with no API key anywhere (the MCP client answers with its model)', async () => {
    const { code, stdout, lines } = await validate(`organism:
  name: sampling
llm:
  backends:
    - provider: mcp-sampling
      model: claude-sonnet-4-5
listeners:
  - name: helper
    agent: true
    description: Helps.
    llm:
      backend: mcp-sampling
      max_tokens: 300
`);
    expect({ code, lines }).toEqual({ code: 0, lines: [''] });
    expect(stdout).toContain('ok:');
  });

  it('refuses a key, URL or script on it, each with its file:line:column', async () => {
    const { code, file, lines } = await validate(`organism:
  name: sampling
llm:
  backends:
    - provider: mcp-sampling
      api_key_env: ANTHROPIC_API_KEY
      base_url: http://127.0.0.1:9
listeners:
  - name: helper
    agent: true
    description: Helps.
`);
    expect(code).toBe(1);
    const why =
      'means nothing for provider mcp-sampling: the MCP client that started the thread answers with its own model (no key, URL or script); remove it';
    expect(lines).toEqual([
      `${file}:6:7: llm.backends[0].api_key_env: api_key_env ${why}`,
      `${file}:7:7: llm.backends[0].base_url: base_url ${why}`,
      `${file}: 2 problems found`,
    ]);
  });
});

function esc(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
