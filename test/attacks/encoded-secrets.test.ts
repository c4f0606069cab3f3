/**
 * Issue 25 point 8: a known secret written with escapes does not get past redaction. With the real
 * daemon (bin/organism.js), real bubblewrap: a sandboxed program prints the admin's token (a
 * secret the daemon knows) as hex, %XX, HTML character references and \u escapes, and a client
 * injects it as character references. None of those forms reaches the thread the API shows, the
 * history on disk or the audit log; the plain text around them does.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEscapes } from '../../src/audit/escapes.ts';
import type { DaemonProcess } from '../helpers/daemon.ts';
import { keyVariants } from '../helpers/secrets.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  call,
  chainYaml,
  LISTENERS,
  OPERATOR_TOKEN,
  organismDir,
  startOn,
  TOKENS_ENV,
  until,
} from '../server/helpers.ts';

let dir: string;
let daemon: DaemonProcess;

beforeAll(async () => {
  const made = await organismDir(`organism:
  name: encoded-secrets
${AUTH_YAML}listeners:
${chainYaml()}  - name: toolbox
    handler: ${LISTENERS}toolbox.ts
    trust: high
    tools: [run_command]
    tool_config:
      run_command:
        shell: true
`);
  dir = made.dir;
  daemon = await startOn(made.file, TOKENS_ENV);
});
afterAll(async () => {
  await daemon?.stop();
});

/**
 * Whether `text` shows the admin token in any form: plain or as keyVariants echo it (10
 * characters in a row), read with its escapes decoded, or 16 digits of its hex.
 */
function shows(text: string): string[] {
  const found: string[] = [];
  const hex = Buffer.from(ADMIN_TOKEN).toString('hex');
  const lower = text.toLowerCase();
  for (let i = 0; i + 16 <= hex.length; i += 2) {
    if (lower.includes(hex.slice(i, i + 16))) {
      found.push(`hex ${hex.slice(i, i + 16)}`);
      break;
    }
  }
  const decoded = (decodeEscapes(text)?.text ?? text).toLowerCase();
  for (const [name, variant] of Object.entries(keyVariants(ADMIN_TOKEN))) {
    const v = variant.toLowerCase();
    for (let i = 0; i + 10 <= v.length; i++) {
      if (decoded.includes(v.slice(i, i + 10))) {
        found.push(name);
        break;
      }
    }
  }
  return found;
}

const api = (path: string, body?: unknown) => call(daemon.url, path, { token: OPERATOR_TOKEN, body });

/** The thread's view once a message from `from` to `to` is in it. */
async function threadOnceAnswered(thread: string, from: string, to: string): Promise<string> {
  return until(async () => {
    const { text } = await api(`/api/v1/threads/${thread}`);
    return text.includes(`"from":"${from}","to":"${to}"`) ? text : undefined;
  });
}

describe('a known secret written with escapes', () => {
  it('is redacted from a sandboxed tool result (hex, %XX, &#x;, &#;, \\u) in the thread and the audit log', async () => {
    // The program gets the token in its command (redacted there already, as plain text) and
    // prints it encoded six ways, each line marked so the test can see the lines arrived.
    const bytes = (format: string) => `for b in $(printf %s "$t" | od -An -t${format}); do printf `;
    const script = [
      `t='${ADMIN_TOKEN}'`,
      'h=$(printf %s "$t" | od -An -tx1 | tr -d " \\n")',
      'echo "hex-line:$h:end"',
      'echo "upper-line:$(printf %s "$h" | tr a-f A-F):end"',
      `printf pct-line:; ${bytes('x1')}'%%%s' "$b"; done; echo :end`,
      `printf ent-line:; ${bytes('x1')}'&#x%s;' "$b"; done; echo :end`,
      `printf dec-line:; ${bytes('u1')}'&#%s;' "$b"; done; echo :end`,
      `printf u-line:; ${bytes('x1')}'\\\\u00%s' "$b"; done; echo :end`,
    ].join('\n');
    const args = JSON.stringify({ command: script })
      .replaceAll('&', '&amp;')
      .replaceAll('<', '&lt;')
      .replaceAll('>', '&gt;');
    const injected = await api('/api/v1/inject', {
      to: 'toolbox',
      payload: `<use-tool><tool>run_command</tool><args>${args}</args></use-tool>`,
    });
    expect(injected.status).toBe(202);
    const thread = injected.json.thread as string;
    const view = await threadOnceAnswered(thread, 'toolbox', 'api');

    // The program ran and its lines are there, each with the token replaced.
    for (const line of ['hex-line', 'upper-line', 'pct-line', 'ent-line', 'dec-line', 'u-line']) {
      expect(view, line).toMatch(new RegExp(`${line}:\\[REDACTED\\]:end`));
    }
    expect(view).toContain('<status>ok</status>');
    expect(shows(view)).toEqual([]);
    const listed = await api(`/api/v1/messages?thread=${thread}`);
    expect(shows(listed.text)).toEqual([]);

    const audit = await readFile(join(dir, '.organism', 'audit.jsonl'), 'utf8');
    expect(audit).toContain('run_command');
    expect(shows(audit)).toEqual([]);
  });

  it('leaves zero bytes read as base64 or hex alone: no secret, no [REDACTED], in the thread and the audit log', async () => {
    const base64 = Buffer.alloc(48).toString('base64');
    const hex = '0'.repeat(64);
    const script = `printf '%s %s' ${base64} ${hex}; head -c 30 /dev/zero | base64`;
    const args = JSON.stringify({ command: script });
    const injected = await api('/api/v1/inject', {
      to: 'toolbox',
      payload: `<use-tool><tool>run_command</tool><args>${args.replaceAll('&', '&amp;').replaceAll('<', '&lt;')}</args></use-tool>`,
    });
    expect(injected.status).toBe(202);
    const view = await threadOnceAnswered(injected.json.thread as string, 'toolbox', 'api');
    expect(view).toContain('<status>ok</status>');
    expect(view).not.toContain('[REDACTED]');
    // The call as recorded (its arguments go through the audit's redaction) and the program's output.
    expect(view).toContain(`printf '%s %s' ${base64} ${hex}`);
    expect(view).toContain(`${base64} ${hex}${Buffer.alloc(30).toString('base64')}`);
    const audit = await readFile(join(dir, '.organism', 'audit.jsonl'), 'utf8');
    expect(audit).toContain(`printf '%s %s' ${base64} ${hex}`);
  });

  it('is redacted from a message a client sends with character references, in the thread and on disk', async () => {
    const refs = [...ADMIN_TOKEN].map((c, i) =>
      i % 2 ? `&#x${c.charCodeAt(0).toString(16)};` : `&#${c.charCodeAt(0)};`,
    );
    const injected = await api('/api/v1/inject', {
      to: 'greeter',
      payload: `<greeting><name>${refs.join('')}</name></greeting>`,
    });
    expect(injected.status).toBe(202);
    const thread = injected.json.thread as string;
    const view = await threadOnceAnswered(thread, 'shouter', 'printer');
    expect(view).toContain('[REDACTED]');
    expect(shows(view)).toEqual([]);

    await daemon.stop();
    const history = join(dir, '.organism', 'history');
    let onDisk = '';
    for (const file of await readdir(history, { recursive: true })) {
      onDisk += await readFile(join(history, String(file)), 'utf8').catch(() => '');
    }
    expect(onDisk).toContain(thread);
    expect(shows(onDisk)).toEqual([]);
  });
});
