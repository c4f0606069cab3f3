/** The daemon's logger writes no line with a secret the daemon knows, whatever field carries it. */
import { afterEach, describe, expect, it } from 'vitest';
import { knownSecrets } from '../../src/audit/redact.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { leaks } from '../helpers/secrets.ts';

const KEY = 'sk-ant-api03-Lw3Qe8Rt1Yu6Io4Pa9Sd2Fg7Hj5Kl0Zx-Cv2Bn';

afterEach(() => knownSecrets.delete('test:logger'));

function captured(lines: string[]) {
  return createLogger({
    level: 'info',
    organism: 'log-test',
    destination: { write: (line: string) => lines.push(line) },
  });
}

describe('the log', () => {
  it('redacts every form of a known secret in messages, fields and errors', () => {
    knownSecrets.set('test:logger', [KEY]);
    const lines: string[] = [];
    const logger = captured(lines);
    const base64 = Buffer.from(KEY).toString('base64');
    logger.info({ body: `echo ${KEY.slice(0, 20)}`, nested: { upper: KEY.toUpperCase() } }, `got ${base64}`);
    logger.child({ component: 'agents' }).warn({ err: new Error(`bad key ${KEY.slice(7)}`) }, 'failed');
    const out = lines.join('');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(out).toContain('"msg":"got [REDACTED]');
    expect(out).toContain('"body":"echo [REDACTED]"');
    expect(leaks(out, KEY)).toEqual([]);
  });

  it('leaves lines alone while no secret is known', () => {
    // The registry is per process: files run before this one in the same worker may have left theirs.
    knownSecrets.clear();
    const lines: string[] = [];
    captured(lines).info({ body: `echo ${KEY}` }, 'plain');
    expect(lines.join('')).toContain(KEY);
  });
});
