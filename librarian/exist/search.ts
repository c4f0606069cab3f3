/**
 * Full-text search on eXist: ft:query over the root element of each document (what the
 * collection.xconf in index-config.ts indexes), ranked by ft:score, with kwic:summarize for the
 * snippet. The terms go in as an sx-bound sequence and the Lucene query is built as XML inside the
 * query (`<query><bool><term occur="should">..`), so no term is ever parsed as Lucene or XQuery
 * syntax. Ties are broken by path: the documents are put in path order first, then ordered by one
 * key, score minus a vanishing multiple of that position (one key, because an engine may sort
 * ties in any order; fontoxpath, which the tests' fake eXist runs, allows only one order spec).
 * Without a Lucene index, ft:query silently finds nothing, so FALLBACK_QUERY ranks by how
 * often each term occurs (contains() / tokenize()), and the result says so.
 */
import type { Element } from 'slimdom';
import { parseXmlDocument } from 'slimdom';
import { LibrarianError } from '../../src/errors.ts';
import type { SearchHit } from '../backend.ts';
import { roundScore } from '../text/index.ts';
import { makeSnippet, renderSnippet } from '../text/snippet.ts';

export const SEARCH_QUERY = `xquery version "3.1";
declare namespace ft = "http://exist-db.org/xquery/lucene";
import module namespace kwic = "http://exist-db.org/xquery/kwic";
declare variable $collection external;
declare variable $terms external;
declare variable $max external;
let $query := <query><bool>{ for $t in $terms return <term occur="should">{ $t }</term> }</bool></query>
let $by-path :=
  for $hit in collection($collection)/*[ft:query(., $query)]
  order by document-uri(root($hit))
  return $hit
let $ranked :=
  for $hit at $i in $by-path
  stable order by $i * 1e-12 - ft:score($hit)
  return $hit
for $hit in subsequence($ranked, 1, $max)
return <hit path="{ document-uri(root($hit)) }" score="{ ft:score($hit) }">{
  (kwic:summarize($hit, <config width="40"/>))[1]
}</hit>`;

/** Terms are lower-case letters and digits only (text/tokenize.ts), so they are safe as regexes. */
export const FALLBACK_QUERY = `xquery version "3.1";
declare namespace math = "http://www.w3.org/2005/xpath-functions/math";
declare variable $collection external;
declare variable $terms external;
declare variable $max external;
let $by-path :=
  for $doc in collection($collection)/*
  let $text := lower-case(string-join($doc//text(), ' '))
  where some $t in $terms satisfies contains($text, $t)
  order by document-uri(root($doc))
  return $doc
let $ranked :=
  for $doc at $i in $by-path
  let $text := lower-case(string-join($doc//text(), ' '))
  let $words := count(tokenize($text, '\\W+')[. ne ''])
  let $count := sum(for $t in $terms return count(tokenize($text, $t)) - 1)
  let $score := $count div math:sqrt(max(($words, 1)))
  stable order by $i * 1e-12 - $score
  return <hit path="{ document-uri(root($doc)) }" score="{ $score }">{
    substring(normalize-space(string-join($doc//text(), ' ')), 1, 20000)
  }</hit>
return subsequence($ranked, 1, $max)`;

function hitElement(xml: string): Element {
  const root = parseXmlDocument(xml).documentElement;
  if (root?.localName !== 'hit') {
    throw new LibrarianError(
      'librarian.backend',
      'eXist-db answered the search with something other than <hit> elements',
    );
  }
  return root;
}

function span(p: Element | undefined, cls: string): string {
  return (
    p?.children.find((s) => s.localName === 'span' && s.getAttribute('class') === cls)?.textContent ?? ''
  );
}

/** Hits of SEARCH_QUERY: kwic's previous / hi / following spans become the marked snippet. */
export function parseSearchHits(items: string[]): SearchHit[] {
  return items.map((xml) => {
    const hit = hitElement(xml);
    const p = hit.children.find((c) => c.localName === 'p');
    const snippet = p
      ? renderSnippet({ before: span(p, 'previous'), hit: span(p, 'hi'), after: span(p, 'following') })
      : '';
    return {
      path: hit.getAttribute('path') ?? '',
      score: roundScore(Number(hit.getAttribute('score'))),
      snippet,
    };
  });
}

/** Hits of FALLBACK_QUERY: the text comes back and the snippet is cut here, as the embedded backend does. */
export function parseFallbackHits(items: string[], terms: readonly string[]): SearchHit[] {
  return items.map((xml) => {
    const hit = hitElement(xml);
    return {
      path: hit.getAttribute('path') ?? '',
      score: roundScore(Number(hit.getAttribute('score'))),
      snippet: makeSnippet(hit.textContent ?? '', terms),
    };
  });
}
