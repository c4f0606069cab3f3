// Module resolve hook (node:module register): every module of the built package's dist/ this
// process imports is appended, as a file: URL, to the file DIST_IMPORTS_FILE names.
import { appendFileSync } from 'node:fs';

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (result.url.startsWith('file:') && result.url.includes('/dist/'))
    appendFileSync(process.env.DIST_IMPORTS_FILE, `${result.url}\n`);
  return result;
}
