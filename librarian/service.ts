/**
 * The one librarian backend of an organism, created on first use through the runtime's resource
 * cache (key `librarian`) from organism.yaml's `librarian:` section and closed by the runtime at
 * shutdown. Tools never hold a backend of their own.
 */
import { LibrarianError } from '../src/errors.ts';
import type { ToolRunContext, ToolServices } from '../src/tools/types.ts';
import type { LibrarianBackend } from './backend.ts';
import {
  basexAddress,
  type LibrarianOptions,
  librarianUnavailable,
  resolveLibrarianOptions,
} from './config.ts';

export const RESOURCE_KEY = 'librarian';

/** The librarian options of this organism (defaults applied). */
export function librarianOptions(services: ToolServices, dataDir?: string): LibrarianOptions {
  const config = services.config as { librarian?: unknown; organism?: { data_dir?: string } };
  const dir = config.organism?.data_dir ?? dataDir;
  if (!dir)
    throw new LibrarianError(
      'librarian.not_configured',
      'organism.data_dir is not set, so the embedded librarian has no home',
    );
  return resolveLibrarianOptions(config.librarian, dir);
}

export async function createBackend(
  options: LibrarianOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LibrarianBackend> {
  const reason = librarianUnavailable(options, env);
  if (reason) throw new LibrarianError('librarian.not_configured', reason);
  // Each backend (with its XML DOM, query engine or HTTP client) is imported when it is first used,
  // not when the daemon imports the librarian tools at start to learn their names.
  if (options.backend === 'embedded') {
    const { EmbeddedBackend } = await import('./embedded/backend.ts');
    return EmbeddedBackend.open({ dir: options.dataDir, defaultCollection: options.defaultCollection });
  }
  if (options.backend === 'basex') {
    const { BasexBackend } = await import('./basex/backend.ts');
    const { host, port } = basexAddress(options.url!)!;
    const passwordEnv = options.passwordEnv!;
    const backend = new BasexBackend({
      host,
      port,
      user: options.user!,
      // Read at each connection, so a rotated secret is picked up on the next one.
      password: () => env[passwordEnv] ?? '',
      defaultCollection: options.defaultCollection,
    });
    backend.start().catch(() => {});
    return backend;
  }
  const { ExistBackend } = await import('./exist/backend.ts');
  const backend = new ExistBackend({
    url: options.url!,
    defaultCollection: options.defaultCollection,
    ...(options.user ? { user: options.user } : {}),
    ...(options.passwordEnv ? { passwordEnv: options.passwordEnv } : {}),
    env,
  });
  // Collection and index set-up start now; calls that need them wait for them, and a server that
  // is down now is tried again on the next call.
  backend.start().catch(() => {});
  return backend;
}

/** The organism's backend, created once. */
export function librarianBackend(ctx: ToolRunContext): Promise<LibrarianBackend> {
  return sharedLibrarian(ctx.services, ctx.dataDir);
}

/** The organism's backend from its services (the tools' one: organism/testing reads and fills it). */
export function sharedLibrarian(services: ToolServices, dataDir?: string): Promise<LibrarianBackend> {
  return services.resources.get(
    RESOURCE_KEY,
    () => createBackend(librarianOptions(services, dataDir), services.env),
    (backend) => backend.close(),
  );
}

/** For ToolDefinition.unavailable: why the configured librarian cannot be used, or null. */
export function librarianUnavailableReason(services: ToolServices): string | null {
  try {
    return librarianUnavailable(librarianOptions(services), services.env);
  } catch (error) {
    return (error as Error).message;
  }
}
