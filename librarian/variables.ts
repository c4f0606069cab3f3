/**
 * External variables for librarian_query, checked once and typed once for both backends: a name
 * is an NCName, a value is a string, number or boolean (or an array of one of those, bound as a
 * sequence). Values are only ever bound as values: eXist gets them as sx:value elements, fontoxpath
 * as typed variables; neither backend puts a value into the query text.
 */
import { LibrarianError } from '../src/errors.ts';
import type { Variables } from './backend.ts';

export type XsType = 'xs:string' | 'xs:integer' | 'xs:double' | 'xs:boolean';

export interface TypedVariable {
  name: string;
  type: XsType;
  /** The raw values, one per sequence item. */
  values: Array<string | number | boolean>;
  /** The values in their lexical form (what eXist's sx:value carries; JS number text is valid xs:double). */
  lexical: string[];
}

const NCNAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
export const MAX_VARIABLES = 64;

function typeOf(value: unknown, where: string): XsType {
  if (typeof value === 'string') return 'xs:string';
  if (typeof value === 'boolean') return 'xs:boolean';
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw new LibrarianError('librarian.invalid_argument', `${where} must be a finite number`);
    return Number.isSafeInteger(value) ? 'xs:integer' : 'xs:double';
  }
  throw new LibrarianError(
    'librarian.invalid_argument',
    `${where} must be a string, number or boolean (or an array of one of those), not ${value === null ? 'null' : typeof value}`,
  );
}

export function typeVariables(variables: Variables | undefined): TypedVariable[] {
  if (variables === undefined || variables === null) return [];
  if (typeof variables !== 'object' || Array.isArray(variables)) {
    throw new LibrarianError('librarian.invalid_argument', 'variables must be an object of name -> value');
  }
  const entries = Object.entries(variables);
  if (entries.length > MAX_VARIABLES) {
    throw new LibrarianError(
      'librarian.invalid_argument',
      `at most ${MAX_VARIABLES} variables may be bound, got ${entries.length}`,
    );
  }
  return entries.map(([name, value]) => {
    if (!NCNAME.test(name)) {
      throw new LibrarianError(
        'librarian.invalid_argument',
        `variable name ${JSON.stringify(name)} is not a valid XQuery name (letters, digits, _ . -; no prefix, no $)`,
      );
    }
    const items = Array.isArray(value) ? (value as Array<string | number | boolean>) : [value];
    if (items.length === 0) return { name, type: 'xs:string', values: [], lexical: [] };
    let type = typeOf(items[0], `variables.${name}[0]`);
    items.forEach((item, i) => {
      const t = typeOf(item, `variables.${name}[${i}]`);
      // Integers mixed with fractions are all doubles; any other mix is a mistake worth reporting.
      if (t !== type) {
        const numeric = (a: XsType) => a === 'xs:integer' || a === 'xs:double';
        if (numeric(t) && numeric(type)) type = 'xs:double';
        else
          throw new LibrarianError(
            'librarian.invalid_argument',
            `variables.${name} mixes ${type} and ${t}; use one type per variable`,
          );
      }
    });
    return { name, type, values: items, lexical: items.map((v) => String(v)) };
  });
}
