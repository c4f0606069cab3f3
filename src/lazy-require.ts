/**
 * Loads a CommonJS dependency on first use instead of at start: the daemon imports every native
 * tool to learn its name and schema, so a library one tool needs (an HTTP client, an XQuery engine)
 * would otherwise weigh on every daemon, used or not. A CommonJS module required here is the same
 * instance an `import` of it gets. A leaf module.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** A function returning `specifier`'s exports, required the first time it is called. */
export function lazyRequire<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(specifier) as T;
    return loaded;
  };
}
