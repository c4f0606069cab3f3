/** The read-only check for librarian_query: what it refuses, what it lets through, and why it parses. */
import { describe, expect, it } from 'vitest';
import { assertReadOnly, findWrites } from '../../librarian/readonly.ts';
import { OrganismError } from '../../src/errors.ts';

describe('read-only queries', () => {
  it.each([
    'collection("/db/organism")//note[title = $t]',
    'declare variable $t external; for $n in collection("/db/organism")//note order by $n/@id return string($n/title)',
    'xmldb:collection-available("/db/organism"), xmldb:get-child-resources("/db/organism")',
    'declare namespace ft = "http://exist-db.org/xquery/lucene"; import module namespace kwic = "http://exist-db.org/xquery/kwic"; collection("/db")/*[ft:query(., "x")] ! kwic:summarize(., <config width="40"/>)',
    'declare namespace my = "urn:my"; declare function my:twice($x) { $x * 2 }; my:twice(2), local:f#0',
    'copy $c := <a><b/></a> modify delete node $c/b return $c',
    '(: xmldb:remove("/db") :) "update insert is only text here"',
    'map:get(map { "a": 1 }, "a"), array:size([1]), math:pi(), util:document-name(.)',
  ])('lets %s through', (query) => {
    expect(findWrites(query)).toEqual([]);
  });

  it.each([
    ['xmldb:remove("/db")', 'xmldb:remove'],
    ['xmldb:store("/db", "a.xml", <a/>)', 'xmldb:store'],
    ['xmldb:create-collection("/db", "x")', 'xmldb:create-collection'],
    [
      'declare namespace x = "http://exist-db.org/xquery/xmldb"; x:remove("/db")',
      'Q{http://exist-db.org/xquery/xmldb}remove',
    ],
    [
      'declare default function namespace "http://exist-db.org/xquery/xmldb"; remove("/db")',
      'Q{http://exist-db.org/xquery/xmldb}remove',
    ],
    ['Q{http://exist-db.org/xquery/xmldb}remove("/db")', 'Q{http://exist-db.org/xquery/xmldb}remove'],
    ['update insert <a/> into doc("/db/x.xml")/a', 'eXist update expression "update insert"'],
    ['update   delete doc("/db/x.xml")//a', 'eXist update expression "update delete"'],
    ['insert node <a/> into doc("/db/x.xml")/a', 'XQuery Update insert expression'],
    ['file:read("/etc/passwd")', 'file:read (module http://exist-db.org/xquery/file)'],
    ['util:eval("xmldb:remove(\'/db\')")', 'util:eval'],
    ['let $f := util:eval#1 return $f("1")', 'util:eval'],
    [
      'function-lookup(xs:QName("xmldb:remove"), 1)("/db")',
      'Q{http://www.w3.org/2005/xpath-functions}function-lookup',
    ],
    ['<p>\'</p>, xmldb:remove("/db"), <p>\'</p>', 'xmldb:remove'],
    ['process:execute(("ls"), ())', 'process:execute (undeclared prefix process)'],
  ])('refuses %s', (query, what) => {
    expect(findWrites(query)).toContain(what);
  });

  it('refuses the EXPath http client and any module it does not know', () => {
    const found = findWrites(
      'import module namespace http = "http://expath.org/ns/http-client"; http:send-request(<http:request method="get"/>)',
    );
    expect(found).toContain('import of module http://expath.org/ns/http-client');
    expect(findWrites('import module namespace m = "urn:somebody:module"; m:f()')).toContain(
      'import of module urn:somebody:module',
    );
  });

  it('explains the refusal and how to lift it', () => {
    try {
      assertReadOnly('xmldb:remove("/db/organism")');
      throw new Error('not refused');
    } catch (error) {
      expect((error as OrganismError).code).toBe('librarian.read_only');
      expect((error as OrganismError).message).toContain('xmldb:remove');
      expect((error as OrganismError).message).toContain('allow_updates: true');
    }
  });

  it('reports a query it cannot parse as a syntax error with line and column', () => {
    try {
      findWrites('for $x in (1, 2)\nreturn $x +');
      throw new Error('not refused');
    } catch (error) {
      expect(error).toBeInstanceOf(OrganismError);
      expect((error as OrganismError).code).toBe('librarian.query');
      expect((error as OrganismError).details).toMatchObject({ line: 2, xquery_code: 'XPST0003' });
    }
  });
});
