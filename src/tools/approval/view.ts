/**
 * What a person is shown when asked to approve a call: the arguments exactly as they will run.
 *
 * Why not the audit's redaction: it hides whatever looks like a credential (`X_TOKEN=...`, a long
 * base64-like run, text past 2,048 characters), so an agent could put the part that matters behind
 * a `*_TOKEN=` and have the person approve the harmless rest. Here the only text hidden is a value
 * of the daemon's own secrets (and its encodings), which the agent cannot choose, and the mask says
 * so. Whatever else would make the shown text differ from what runs (characters a screen does not
 * show or that reorder a line, the mask's own words, a size nobody reads in full) makes the call
 * not reviewable: it is refused rather than shown altered.
 */
import { createHash } from 'node:crypto';
import { knownSecrets } from '../../audit/redact.ts';
import { setOwn } from '../../plain-object.ts';
import { canonicalJson } from '../canonical.ts';
import type { Approval } from './types.ts';

/** Stands where a value of one of the daemon's secrets was. */
export const KNOWN_SECRET_MASK = '[known secret masked]';

/** Largest arguments (canonical JSON, in characters) put to a person; larger ones are not reviewable. */
export const MAX_REVIEW_CHARS = 65_536;

export type ReviewView =
  | {
      /** The arguments as shown: as they run, the daemon's secrets masked. */
      shown: unknown;
      /** Hex SHA-256 of the canonical JSON of the arguments as they run. */
      digest: string;
    }
  | { notReviewable: string };

/**
 * Characters that are not shown as themselves: C0/C1 controls but tab and line breaks (JSON shows
 * those escaped), bidirectional controls (they reorder the rest of a line), and default-ignorable
 * code points (zero-width spaces and joiners, fillers, tags). Two uses stay allowed, since emoji
 * carry them and they hide nothing: a variation selector after a pictograph, and a zero-width
 * joiner between two pictographs.
 */
const HIDDEN =
  /(?![\t\n\r])\p{Cc}|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|(?<!\p{Extended_Pictographic})(?:\ufe0e|\ufe0f)|(?<!\p{Extended_Pictographic}|\p{Emoji_Modifier}|\ufe0f)\u200d|\u200d(?!\p{Extended_Pictographic})|(?!\u200d|\ufe0e|\ufe0f)\p{Default_Ignorable_Code_Point}/u;

/** The arguments a person is asked about, or why they cannot be shown as they run. */
export function reviewView(args: unknown): ReviewView {
  const canonical = canonicalJson(args);
  if (canonical.length > MAX_REVIEW_CHARS) {
    return {
      notReviewable: `the arguments are too large to show a person in full (${canonical.length.toLocaleString('en-US')} characters as JSON; at most ${MAX_REVIEW_CHARS.toLocaleString('en-US')})`,
    };
  }
  const problem = { found: '' };
  const shown = mask(args, problem);
  if (problem.found) return { notReviewable: problem.found };
  return { shown, digest: argsDigest(canonical) };
}

/** Hex SHA-256 of canonical JSON (a digest the audit keeps of what ran). */
export function argsDigest(canonical: string): string {
  return createHash('sha256').update(canonical).digest('hex');
}

function mask(value: unknown, problem: { found: string }): unknown {
  if (typeof value === 'string') return maskString(value, problem);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => mask(item, problem));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) setOwn(out, maskString(key, problem), mask(item, problem));
  return out;
}

function maskString(text: string, problem: { found: string }): string {
  if (problem.found) return text;
  const hidden = HIDDEN.exec(text);
  if (hidden) {
    const code = hidden[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    problem.found = `the arguments hold U+${code} at character ${hidden.index + 1} of ${JSON.stringify(preview(text))}, which a person reading them would not see as it runs`;
    return text;
  }
  if (text.includes(KNOWN_SECRET_MASK)) {
    problem.found = `the arguments hold the text ${JSON.stringify(KNOWN_SECRET_MASK)}, which a person would read as a masked secret`;
    return text;
  }
  return knownSecrets.redact(text, KNOWN_SECRET_MASK);
}

/** The start of a string for a message, its secrets masked and its controls escaped by JSON. */
function preview(text: string): string {
  const cut = text.length > 60 ? `${text.slice(0, 60)}...` : text;
  return knownSecrets
    .redact(cut, KNOWN_SECRET_MASK)
    .replace(/[^\x20-\x7e]/g, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/**
 * `ap_… run_command by ops in thread … (always; operator decides; expires …): {"command":"ls"}`: an
 * approval in one line, as `organism approvals list` prints it and an MCP client's user is asked
 * (elicit.ts). The arguments in full, never cut: a person may decide from this line, so it shows
 * all that will run.
 */
export function approvalLine(a: Approval): string {
  return `${a.id}  ${a.tool} by ${a.listener} in thread ${a.thread} (${a.why}; ${a.role} decides; expires ${a.expires}): ${JSON.stringify(a.args)}`;
}
