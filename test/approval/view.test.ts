/**
 * What a person is shown for approval (src/tools/approval/view.ts): the arguments as they run, only
 * the daemon's own secrets masked; anything that would make the shown text differ from what runs is
 * not reviewable.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { knownSecrets } from '../../src/audit/redact.ts';
import { KNOWN_SECRET_MASK, MAX_REVIEW_CHARS, reviewView } from '../../src/tools/approval/view.ts';
import { canonicalJson } from '../../src/tools/canonical.ts';

const SECRET = 'Zx9-known-secret-Qw3rty';
afterEach(() => knownSecrets.delete('test:view'));

function shown(args: unknown) {
  const view = reviewView(args);
  if ('notReviewable' in view) throw new Error(`not reviewable: ${view.notReviewable}`);
  return view;
}

function refused(args: unknown): string {
  const view = reviewView(args);
  if (!('notReviewable' in view)) throw new Error(`shown: ${JSON.stringify(view.shown)}`);
  return view.notReviewable;
}

describe('reviewView', () => {
  it('shows credential-looking text, long text and nested data exactly as it runs', () => {
    const args = {
      command: 'X_TOKEN="$(echo PWNED > f.txt)" ls; PASSWORD=hunter2 API_KEY=abc',
      header: 'Authorization: Bearer QWxhZGRpbjpvcGVuIHNlc2FtZQAbCdEfGh1234567890',
      password: 'not-a-known-secret',
      long: 'x'.repeat(5000),
      list: [{ sk: 'sk-ABCDEFGHIJKLMNOPQRSTUVWX' }, 'ghp_abcdefghijklmnopqrstuvwxyz012345'],
    };
    const view = shown(args);
    expect(view.shown).toEqual(args);
    expect(view.digest).toBe(createHash('sha256').update(canonicalJson(args)).digest('hex'));
  });

  it("masks the daemon's own secrets in values and keys, saying so; the digest is of what runs", () => {
    knownSecrets.set('test:view', [SECRET]);
    const args = { command: `curl -H 'x: ${SECRET}' host`, [SECRET]: 1 };
    const view = shown(args);
    expect(view.shown).toEqual({ command: `curl -H 'x: ${KNOWN_SECRET_MASK}' host`, [KNOWN_SECRET_MASK]: 1 });
    expect(view.digest).toBe(createHash('sha256').update(canonicalJson(args)).digest('hex'));
  });

  it.each([
    ['a right-to-left override', 'echo a\u202eb'],
    ['a left-to-right isolate', 'echo \u2066b'],
    ['an Arabic letter mark', 'echo \u061cb'],
    ['a zero-width space', 'r\u200bm'],
    ['a zero-width joiner between letters', 'r\u200dm'],
    ['a word joiner', 'a\u2060b'],
    ['a soft hyphen', 'a\u00adb'],
    ['a Hangul filler', 'a\u3164b'],
    ['a tag character', 'a\u{e0041}b'],
    ['a variation selector after a letter', 'a\ufe0fb'],
    ['an escape (ANSI sequences)', 'a\u001b[2Jb'],
    ['a delete', 'a\u007fb'],
    ['a C1 control', 'a\u009bb'],
    ['a byte-order mark', '\ufeffls'],
  ])('refuses %s', (_name, text) => {
    expect(refused({ command: text })).toMatch(/which a person reading them would not see as it runs/);
    expect(refused({ [text]: 'key' })).toMatch(/U\+/);
  });

  it('keeps emoji, tabs and line breaks', () => {
    const args = { body: 'ok 👍🏽 ❤️ 👩‍💻 🏳️‍🌈\n\tdone\r\n' };
    expect(shown(args).shown).toEqual(args);
  });

  it("refuses the mask's own text, which would read as a masked secret", () => {
    expect(refused({ command: `echo ${KNOWN_SECRET_MASK}` })).toContain('would read as a masked secret');
  });

  it('refuses arguments too large to read in full, saying how large', () => {
    expect(shown({ a: 'x'.repeat(MAX_REVIEW_CHARS - 20) }).shown).toBeDefined();
    expect(refused({ a: 'x'.repeat(MAX_REVIEW_CHARS) })).toMatch(
      /too large to show a person in full \(65,5\d\d characters/,
    );
  });

  it('names where the hidden character is, without echoing a known secret', () => {
    knownSecrets.set('test:view', [SECRET]);
    const message = refused({ command: `${SECRET} \u202e rm` });
    expect(message).toContain(`U+202E at character ${SECRET.length + 2}`);
    expect(message).not.toContain(SECRET);
  });
});
