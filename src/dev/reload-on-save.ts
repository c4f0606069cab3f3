/**
 * `organism dev`'s loop: every settled save of a watched file reloads the running daemon (the same
 * all-or-nothing hot reload as `organism reload`), then says what it did: the listeners added,
 * replaced and removed, or each issue that refused it as file:line:column (as `organism validate`
 * prints them) while the running version keeps serving. After each attempt the watched files are
 * worked out again, from the running config and from the file as saved (a new listener that does
 * not load yet is watched, so fixing it reloads).
 */
import type { Logger } from 'pino';
import { loadConfig } from '../config/index.ts';
import type { OrganismConfig } from '../config/types.ts';
import { ConfigError, formatConfigIssue, OrganismError, ReloadError } from '../errors.ts';
import type { ReloadReport } from '../server/service.ts';
import { addToWatchSet, emptyWatchSet, type WatchSet } from './watch-set.ts';
import { FolderWatcher } from './watcher.ts';

export interface DevReloadOptions {
  /** Quiet time after the last save before reloading, ms (editors write a file in several steps). */
  debounceMs: number;
  /** Wait before trying again when a reload from elsewhere (SIGHUP, the API) is running, ms. */
  busyRetryMs: number;
}

export function defaultDevReloadOptions(): DevReloadOptions {
  return { debounceMs: 100, busyRetryMs: 200 };
}

/** The running daemon, as far as the loop needs it. */
export interface DevTarget {
  /** organism.yaml as the daemon was given it. */
  configPath: string;
  /** The configuration in force now (a reload replaces it). */
  config(): OrganismConfig;
  /** The environment the daemon reads the file's `${VAR}`s from. */
  env: NodeJS.ProcessEnv;
  reload(by: string): Promise<ReloadReport>;
  /** Where the loop says what it did (at info and error, whatever organism.log_level says). */
  logger: Logger;
}

export interface DevReload {
  /** Resolves once the watchers are closed and no reload of this loop runs any more. */
  close(): Promise<void>;
  /** The folders watched now. */
  folders(): string[];
}

export async function startDevReload(
  target: DevTarget,
  options: Partial<DevReloadOptions> = {},
): Promise<DevReload> {
  const settings = { ...defaultDevReloadOptions(), ...options };
  const log = target.logger.child({ component: 'dev' }, { level: 'info' });
  let running: Promise<void> | undefined;
  let queued: string[] = [];
  let closed = false;
  /** Files already said to be left unwatched (said once each). */
  const told = new Set<string>();

  const watcher = new FolderWatcher({
    debounceMs: settings.debounceMs,
    onSave: (files) => {
      queued.push(...files);
      running ??= drain().finally(() => {
        running = undefined;
      });
    },
    onError: (folder, error) => log.warn({ folder, err: error.message }, `cannot watch ${folder}`),
  });

  /** Reloads until no save is left waiting (saves during a reload make one more). */
  async function drain(): Promise<void> {
    while (queued.length > 0 && !closed) {
      const files = [...new Set(queued)].sort();
      queued = [];
      await reloadFor(files);
      watcher.update(await watchSet());
    }
  }

  async function reloadFor(files: string[]): Promise<void> {
    const started = performance.now();
    log.info({ files }, `saved ${files.map(shortName).join(', ')}: reloading`);
    for (;;) {
      try {
        const report = await target.reload('dev');
        const ms = Math.round(performance.now() - started);
        log.info(
          {
            added: report.added,
            removed: report.removed,
            replaced: report.replaced,
            restart_required: report.restart_required,
          },
          `reloaded in ${ms} ms: ${summary(report)}`,
        );
        return;
      } catch (error) {
        if (error instanceof ReloadError && error.code === 'reload.in_progress' && !closed) {
          await new Promise((resolve) => setTimeout(resolve, settings.busyRetryMs));
          continue;
        }
        refused(error);
        return;
      }
    }
  }

  function refused(error: unknown): void {
    if (error instanceof ConfigError) {
      for (const issue of error.issues) log.error(formatConfigIssue(issue));
      const n = error.issues.length;
      log.error(
        `reload refused: ${n} problem${n === 1 ? '' : 's'}; the running version keeps serving. Save again to retry.`,
      );
      return;
    }
    const message = error instanceof OrganismError ? error.message : String(error);
    log.error(`reload refused: ${message}; the running version keeps serving`);
  }

  /** From the running config, and from the file as saved when it loads (without its modules). */
  async function watchSet(): Promise<WatchSet> {
    const set = await addToWatchSet(emptyWatchSet(), target.configPath, target.config());
    try {
      const saved = await loadConfig(target.configPath, { env: target.env, loadModules: false });
      await addToWatchSet(set, target.configPath, saved.config);
    } catch {
      // The file as saved does not load: the running config's files (the file itself among them) stay watched.
    }
    for (const [file, workspace] of set.unwatched) {
      if (told.has(file)) continue;
      told.add(file);
      log.warn(
        { file, workspace },
        `not reloading on saves of ${shortName(file)}: it is inside the workspace ${shortName(workspace)}, which tools write (a module written there would run in the daemon); 'organism reload' loads it`,
      );
    }
    return set;
  }

  watcher.update(await watchSet());
  log.info(
    { folders: watcher.folders() },
    `watching organism.yaml, .env, listeners, tools and their imports: a save reloads`,
  );
  return {
    folders: () => watcher.folders(),
    async close() {
      closed = true;
      watcher.close();
      await running;
    },
  };
}

function summary(report: ReloadReport): string {
  const parts: string[] = [];
  for (const [label, names] of [
    ['added', report.added],
    ['replaced', report.replaced],
    ['removed', report.removed],
  ] as const) {
    if (names.length > 0) parts.push(`${label} ${names.join(', ')}`);
  }
  if (parts.length === 0) parts.push('listeners unchanged (settings and tools read again)');
  if (report.restart_required.length > 0)
    parts.push(`needs a restart to apply: ${report.restart_required.join(', ')}`);
  return parts.join('; ');
}

function shortName(file: string): string {
  const cwd = `${process.cwd()}/`;
  return file.startsWith(cwd) ? file.slice(cwd.length) : file;
}
