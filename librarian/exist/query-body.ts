/**
 * The body of a REST query POST, as eXist's RESTServer.doPost reads it:
 *
 *   <query xmlns="http://exist.sourceforge.net/NS/exist" start="1" max="N" typed="yes">
 *     <text><![CDATA[ the XQuery ]]></text>
 *     <variables>
 *       <variable><qname><localname>NAME</localname></qname>
 *         <sx:sequence xmlns:sx="http://exist-db.org/xquery/types/serialized">
 *           <sx:value type="xs:string">VALUE</sx:value></sx:sequence></variable>
 *     </variables>
 *     <properties><property name="indent" value="no"/></properties>
 *   </query>
 *
 * The values travel only as sx:value text, XML-escaped, and eXist binds them as typed values; they
 * never touch the query text. (eXist binds the empty sequence to a sequence that is not in the sx
 * namespace, silently, so the namespace matters.) typed="yes" makes eXist wrap attributes, text
 * nodes, documents and atomic values so exist/result.ts can tell them apart.
 */
import { LibrarianError } from '../../src/errors.ts';
import type { Variables } from '../backend.ts';
import { typeVariables } from '../variables.ts';

export const EXIST_NS = 'http://exist.sourceforge.net/NS/exist';
export const SX_NS = 'http://exist-db.org/xquery/types/serialized';

// Characters XML 1.0 cannot carry at all, even escaped.
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;

/** Text content escaped for an element; \r as a reference so the parser does not turn it into \n. */
export function escapeText(value: string, where: string): string {
  const bad = NOT_XML.exec(value);
  if (bad) {
    throw new LibrarianError(
      'librarian.invalid_argument',
      `${where} contains the control character U+${bad[0].charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}, which XML cannot carry`,
    );
  }
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#13;');
}

/** The query as CDATA; a "]]>" inside it is split across two sections. */
function cdata(query: string): string {
  const bad = NOT_XML.exec(query);
  if (bad)
    throw new LibrarianError(
      'librarian.invalid_argument',
      'query contains a control character, which XML cannot carry',
    );
  return `<![CDATA[${query.replace(/]]>/g, ']]]]><![CDATA[>')}]]>`;
}

export interface QueryBodyOptions {
  variables?: Variables | undefined;
  start?: number;
  max: number;
}

export function buildQueryBody(query: string, options: QueryBodyOptions): string {
  const variables = typeVariables(options.variables)
    .map((v) => {
      const values = v.lexical
        .map((value) => `<sx:value type="${v.type}">${escapeText(value, `variables.${v.name}`)}</sx:value>`)
        .join('');
      return (
        `<variable><qname><localname>${v.name}</localname></qname>` +
        `<sx:sequence xmlns:sx="${SX_NS}">${values}</sx:sequence></variable>`
      );
    })
    .join('');
  return (
    `<query xmlns="${EXIST_NS}" start="${options.start ?? 1}" max="${Math.max(1, Math.floor(options.max))}" typed="yes">` +
    `<text>${cdata(query)}</text>` +
    (variables ? `<variables>${variables}</variables>` : '') +
    '<properties><property name="indent" value="no"/></properties>' +
    '</query>'
  );
}
