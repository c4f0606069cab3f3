/**
 * matches#3, replace#4 and tokenize#3 (regex flags, regex-flags.ts) and contains-token#2, which
 * fontoxpath lacks. The regex ones run fontoxpath's own two-argument function on the rewritten
 * pattern, so XPath's regex semantics (not JavaScript's) decide the match.
 */
import fontoxpath from 'fontoxpath';
import { OrganismError } from '../../src/errors.ts';
import { replacementFor, withoutFlags } from './regex-flags.ts';

type Register = typeof fontoxpath.registerCustomXPathFunction;
type Context = { currentContext: unknown };
/** Keeps an OrganismError for the evaluator to rethrow (fontoxpath wraps what a function throws). */
type Keep = (ctx: Context, error: Error) => Error;

const XML_SPACE = /[ \t\r\n]+/;

function run<T>(expression: string, variables: Record<string, unknown>, type: number): T {
  return fontoxpath.evaluateXPath(
    expression,
    null,
    null,
    variables,
    type as never,
    { language: fontoxpath.evaluateXPath.XPATH_3_1_LANGUAGE } as never,
  ) as T;
}

export function registerTextFunctions(
  reg: Register,
  fn: (localName: string) => { namespaceURI: string; localName: string },
  keep: Keep,
): void {
  const pattern = (ctx: Context, p: string, flags: string, input: string): string => {
    try {
      return withoutFlags(p, flags, input);
    } catch (error) {
      throw error instanceof OrganismError ? keep(ctx, error) : error;
    }
  };
  reg(fn('matches'), ['xs:string?', 'xs:string', 'xs:string'], 'xs:boolean', (ctx, input, p, flags) =>
    run<boolean>(
      'matches($input, $pattern)',
      { input: input ?? '', pattern: pattern(ctx, p as string, flags as string, (input as string) ?? '') },
      fontoxpath.evaluateXPath.BOOLEAN_TYPE,
    ),
  );
  reg(
    fn('replace'),
    ['xs:string?', 'xs:string', 'xs:string', 'xs:string'],
    'xs:string',
    (ctx, input, p, replacement, flags) =>
      run<string>(
        'replace($input, $pattern, $replacement)',
        {
          input: input ?? '',
          pattern: pattern(ctx, p as string, flags as string, (input as string) ?? ''),
          replacement: replacementFor(replacement as string, flags as string),
        },
        fontoxpath.evaluateXPath.STRING_TYPE,
      ),
  );
  reg(fn('tokenize'), ['xs:string?', 'xs:string', 'xs:string'], 'xs:string*', (ctx, input, p, flags) =>
    run<string[]>(
      'tokenize($input, $pattern)',
      { input: input ?? '', pattern: pattern(ctx, p as string, flags as string, (input as string) ?? '') },
      fontoxpath.evaluateXPath.STRINGS_TYPE,
    ),
  );
  // F&O 3.1 5.3.3 with the codepoint collation: any input string, split on XML whitespace, holding
  // the token with its own leading and trailing whitespace trimmed.
  reg(fn('contains-token'), ['xs:string*', 'xs:string'], 'xs:boolean', (_ctx, inputs, token) => {
    const wanted = (token as string).replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
    if (wanted === '') return false;
    return (inputs as string[]).some((s) => s.split(XML_SPACE).includes(wanted));
  });
}
