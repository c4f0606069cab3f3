// Module resolve hook (node:module register): every @opentelemetry module this process imports
// is appended to the file OTEL_IMPORTS_FILE names.
import { appendFileSync } from 'node:fs';

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (result.url.includes('/node_modules/@opentelemetry/'))
    appendFileSync(process.env.OTEL_IMPORTS_FILE, `${result.url}\n`);
  return result;
}
