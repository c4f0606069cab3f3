/**
 * Runs an XQuery 3.1 query with fontoxpath over a DocumentSource and returns what eXist's REST API
 * would: the total number of items and the first `maxResults`, nodes serialized, atomic values as
 * their XPath string value. External variables are bound as typed values (fontoxpath's variables
 * option), never as text. The fake eXist in the tests evaluates with this same function.
 */
import fontoxpath from 'fontoxpath';
import { Document, type Node, serializeToWellFormedString } from 'slimdom';
import { LibrarianError } from '../../src/errors.ts';
import type { QueryResult, Variables } from '../backend.ts';
import { typeVariables } from '../variables.ts';
import { xqueryError } from '../xquery-errors.ts';
import { type QueryScope, registerLibrarianFunctions, resolveFunctionName } from './functions.ts';

export interface EvaluateOptions {
  variables?: Variables | undefined;
  maxResults: number;
  /** Extra evaluation options (the fake eXist adds its modules' namespaces here). */
  language?: 'xquery' | 'xquery-update';
}

/** fontoxpath values for the variables: xs:integer stays an integer, arrays become sequences. */
export function fontoxpathVariables(variables: Variables | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const v of typeVariables(variables)) {
    const single = v.values.length === 1;
    const factory = fontoxpath.createTypedValueFactory(single ? v.type : `${v.type}*`);
    out[v.name] = factory(single ? (v.values[0] as never) : (v.values as never), fontoxpath.domFacade);
  }
  return out;
}

function isNode(item: unknown): item is Node {
  return typeof item === 'object' && item !== null && typeof (item as Node).nodeType === 'number';
}

/** One result item as eXist's REST API gives it (typed="yes", unwrapped by exist/result.ts). */
export function serializeItem(node: Node): string {
  switch (node.nodeType) {
    case 2: // attribute
      return (node as unknown as { value: string }).value;
    case 3: // text
    case 4: // CDATA
      return (node as unknown as { data: string }).data;
    default:
      return serializeToWellFormedString(node);
  }
}

export function evaluateQuery(query: string, scope: QueryScope, options: EvaluateOptions): QueryResult {
  registerLibrarianFunctions();
  const variables = fontoxpathVariables(options.variables);
  const evalOptions = {
    language:
      options.language === 'xquery-update'
        ? fontoxpath.evaluateXPath.XQUERY_UPDATE_3_1_LANGUAGE
        : fontoxpath.evaluateXPath.XQUERY_3_1_LANGUAGE,
    currentContext: scope,
    functionNameResolver: resolveFunctionName,
    // Element constructors in the query build nodes in a scratch document of their own.
    nodesFactory: new Document() as never,
  };
  const run = (type: number): unknown[] => {
    try {
      return fontoxpath.evaluateXPath(
        query,
        null,
        null,
        variables,
        type as never,
        evalOptions as never,
      ) as unknown[];
    } catch (error) {
      throw scope.failure ?? xqueryError(error);
    }
  };
  const items = run(fontoxpath.evaluateXPath.ALL_RESULTS_TYPE);
  const shown = items.slice(0, Math.max(0, options.maxResults));
  let strings: string[] | undefined;
  const results = shown.map((item, i) => {
    if (isNode(item)) return serializeItem(item);
    if (typeof item === 'object' && item !== null && !(item instanceof Date)) {
      throw new LibrarianError(
        'librarian.query',
        `result item ${i + 1} is a map, array or function, which has no XML serialization (eXist's REST API cannot return one either); return nodes or atomic values`,
      );
    }
    // fontoxpath hands atomic values over as JS values (a date as a Date); their XPath string value
    // comes from a second, string-typed evaluation. Queries here only read, so evaluating twice is safe.
    strings ??= run(fontoxpath.evaluateXPath.STRINGS_TYPE) as string[];
    return strings[i] ?? String(item);
  });
  return { hits: items.length, results };
}
