/**
 * Maps and arrays as query results, written as JSON (the JSON output method of XQuery
 * serialization 3.1, as the basex backend gives them).
 *
 * fontoxpath hands a map over as a JS object whose values have lost their types (a date becomes a
 * JS Date in local time, 1 and '1' as keys collapse into one), so the JSON is not built from that:
 * the query runs again with its body wrapped in a function, written in XQuery, that serializes each
 * map or array from the typed values (strings by their XPath string value, nodes serialized), and
 * raises what the serialization spec raises: SERE0023 for a member of more than one item, SERE0022
 * for two keys with the same string, SERE0020 for NaN or INF (a function fails
 * fontoxpath's own conversion first).
 * Only queries whose result has a map or an array pay for that second run.
 */
import { queryParts } from './query-text.ts';

const F = 'local:organism_json_';

const FUNCTIONS = `
declare function ${F}string($s as xs:string) as xs:string {
  '"' || replace(replace(replace(replace(replace($s, '\\\\', '\\\\\\\\'), '"', '\\\\"'), '&#10;', '\\\\n'), '&#13;', '\\\\r'), '&#9;', '\\\\t') || '"'
};
declare function ${F}value($v as item()*) as xs:string {
  if (count($v) > 1) then error(fn:QName('http://www.w3.org/2005/xqt-errors', 'err:SERE0023'), 'a map entry or array member of more than one item cannot be written as JSON')
  else if (empty($v)) then 'null'
  else if ($v instance of map(*)) then
    let $keys := map:keys($v)
    return if (count(distinct-values($keys ! string(.))) ne count($keys))
      then error(fn:QName('http://www.w3.org/2005/xqt-errors', 'err:SERE0022'), 'two keys of a map have the same string value')
      else '{' || string-join(for $k in $keys return ${F}string(string($k)) || ':' || ${F}value($v($k)), ',') || '}'
  else if ($v instance of array(*)) then
    '[' || string-join(for $i in 1 to array:size($v) return ${F}value($v($i)), ',') || ']'
  else if ($v instance of node()) then ${F}string(serialize($v))
  else if ($v instance of xs:boolean) then string($v)
  else if ($v instance of xs:double or $v instance of xs:float) then
    if ($v ne $v or abs($v) eq xs:double('INF')) then error(fn:QName('http://www.w3.org/2005/xqt-errors', 'err:SERE0020'), 'NaN and INF cannot be written as JSON') else string($v)
  else if ($v instance of xs:decimal) then string($v)
  else ${F}string(string($v))
};
`;

/**
 * The query rewritten to give, for each result item, its JSON if it is a map or array, '' for a
 * node (serialized apart) and the string value of any other item (fontoxpath's own string-typed
 * evaluation refuses a sequence holding a map).
 */
export function jsonQuery(query: string): string | null {
  const parts = queryParts(query);
  if (!parts) return null;
  return (
    `${parts.prolog}${FUNCTIONS}\nfor $organism_item_ in (${parts.body}\n) return ` +
    `if ($organism_item_ instance of map(*) or $organism_item_ instance of array(*)) then ${F}value($organism_item_) ` +
    `else if ($organism_item_ instance of node()) then '' else string($organism_item_)`
  );
}

/** A map or array as fontoxpath hands it over (a node, a Date or a typed value object is not). */
export function isMapOrArray(item: unknown): boolean {
  if (Array.isArray(item)) return true;
  if (typeof item !== 'object' || item === null) return false;
  if (typeof (item as { nodeType?: unknown }).nodeType === 'number') return false;
  const proto = Object.getPrototypeOf(item);
  return proto === null || proto === Object.prototype;
}
