/**
 * Keyword-in-context snippets: the text around the first hit of any query term, cut at word
 * boundaries, the hit marked. The parts are kept separate so the eXist backend can build the same
 * snippet from kwic:summarize's previous / hi / following spans.
 */
import { tokens } from './tokenize.ts';

export interface SnippetParts {
  before: string;
  hit: string;
  after: string;
}

/** Characters of context on each side of the hit (kwic:summarize's `width`). */
export const SNIPPET_WIDTH = 40;

/** The text from `from` on, starting at a whole word, with "..." where it was cut. */
function cutStart(text: string, from: number): string {
  if (from <= 0) return text;
  let rest = text.slice(from);
  // Cut inside a word: drop what is left of it.
  if (text[from - 1] !== ' ' && text[from] !== ' ') {
    const space = rest.indexOf(' ');
    rest = space >= 0 ? rest.slice(space) : '';
  }
  return `...${rest.trimStart()}`;
}

/** The text up to `to`, ending at a whole word, with "..." where it was cut. */
function cutEnd(text: string, to: number): string {
  if (to >= text.length) return text;
  let head = text.slice(0, to);
  if (text[to] !== ' ' && text[to - 1] !== ' ') {
    const space = head.lastIndexOf(' ');
    head = space >= 0 ? head.slice(0, space) : '';
  }
  return `${head.trimEnd()}...`;
}

/** The parts around the first token of `text` that is one of `terms`, or null if none is. */
export function snippetParts(
  text: string,
  terms: readonly string[],
  width = SNIPPET_WIDTH,
): SnippetParts | null {
  const wanted = new Set(terms);
  const hit = tokens(text).find((t) => wanted.has(t.term));
  if (!hit) return null;
  const beforeText = text.slice(0, hit.start);
  const afterText = text.slice(hit.end);
  return {
    before: cutStart(beforeText, beforeText.length - width),
    hit: text.slice(hit.start, hit.end),
    after: cutEnd(afterText, width),
  };
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The snippet as an XML fragment: escaped text with the hit in `<mark>`. */
export function renderSnippet(parts: SnippetParts): string {
  return `${escapeXml(parts.before)}<mark>${escapeXml(parts.hit)}</mark>${escapeXml(parts.after)}`;
}

/** Snippet for `text`, or the start of the text when no term occurs in it. */
export function makeSnippet(text: string, terms: readonly string[], width = SNIPPET_WIDTH): string {
  const parts = snippetParts(text, terms, width);
  if (parts) return renderSnippet(parts);
  return escapeXml(cutEnd(text, width * 2));
}
