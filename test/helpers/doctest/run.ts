/**
 * Runs one page's blocks in order in the doc project, as a reader types them: files written where
 * their marker says, commands run in the project's root against the page's daemon (started before
 * the first command, restarted before the next command after a file of the organism changed, as
 * `npm run dev` reloads on save), TypeScript type-checked, organism.yaml validated against the
 * schema, marked test files run with the project's vitest. Every failure names the page and line.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize } from 'node:path';
import { parseConfigText, toPlain } from '../../../src/config/read.ts';
import { validateAgainstSchema } from '../../../src/config/validate.ts';
import { PageDaemon, tail } from './daemon.ts';
import { type DocBlock, shellScript } from './parse.ts';
import { type DocProject, type Ran, sh } from './project.ts';

export interface RunOptions {
  /** How long one ```sh block may run. */
  commandTimeoutMs: number;
  /** How long the daemon may take to listen. */
  daemonStartMs: number;
}

export const DEFAULT_RUN_OPTIONS: RunOptions = { commandTimeoutMs: 120_000, daemonStartMs: 60_000 };

export interface BlockResult {
  ok: boolean;
  /** On failure: `page:line: what failed`, then the output that shows why. */
  message: string;
}

/** A vitest `it` timeout that lets the runner report a block's own timeout with its output first. */
export function blockTimeout(options: RunOptions = DEFAULT_RUN_OPTIONS): number {
  return options.commandTimeoutMs + options.daemonStartMs + 60_000;
}

const PASSED: BlockResult = { ok: true, message: '' };

export class PageRun {
  private daemon: PageDaemon | undefined;
  /** The file block whose write makes the daemon restart before the next command, if any. */
  private changed: DocBlock | undefined;
  /** Whether organism-env.d.ts may be older than the files it is made from. */
  private typesStale = true;

  constructor(
    readonly project: DocProject,
    readonly options: RunOptions = DEFAULT_RUN_OPTIONS,
  ) {}

  async run(block: DocBlock): Promise<BlockResult> {
    switch (block.kind) {
      case 'sh':
        return this.command(block);
      case 'file':
        return this.file(block);
      case 'ts':
        return this.typecheck(block);
      case 'yaml':
        return validateYaml(block, block.code, { fragment: true });
      case 'test':
        return this.test(block);
      case 'shown':
        return PASSED;
    }
  }

  /** Stops the page's daemon. */
  async close(): Promise<void> {
    await this.daemon?.stop();
    this.daemon = undefined;
  }

  private async command(block: DocBlock): Promise<BlockResult> {
    const where = at(block);
    if (this.daemon && !this.daemon.running) {
      const log = this.daemon.log();
      const code = this.daemon.exitCode;
      this.daemon = undefined;
      return fail(`${where}: the page's daemon had exited (${code}) before this block; its log:\n${log}`);
    }
    if (!this.daemon || this.changed) {
      const after = this.changed;
      await this.close();
      try {
        this.daemon = await PageDaemon.start(this.project.dir, this.project.env, this.options.daemonStartMs);
        this.changed = undefined;
      } catch (error) {
        const why = after ? ` with ${after.path} as written at ${at(after)}` : '';
        return fail(`${where}: the daemon did not start${why}: ${(error as Error).message}`);
      }
    }
    const script = shellScript(block.code);
    // A command may change what the types are made from (organism.yaml, a module).
    this.typesStale = true;
    const ran = await sh('bash', ['-e', '-o', 'pipefail', '-c', script], this.project.dir, {
      // Nothing about the daemon: the CLI finds it through the data dir as a user's does, and a
      // page's curl reads its address there too (.organism/daemon.json).
      env: this.project.env,
      timeoutMs: this.options.commandTimeoutMs,
    });
    if (ran.code === 0) return PASSED;
    const how =
      ran.signal === 'timeout'
        ? `did not finish within ${this.options.commandTimeoutMs} ms`
        : `exited ${ran.code ?? ran.signal}`;
    return fail(
      `${where}: \`\`\`${block.lang} block ${how}\n${indent(script, '$ ')}\n${output(ran)}` +
        `\n--- the daemon's log (last lines):\n${this.daemon.log()}`,
    );
  }

  private async file(block: DocBlock): Promise<BlockResult> {
    const target = inProject(block.path!);
    if (!target)
      return fail(`${at(block)}: the file marker names '${block.path}', not a path inside the project`);
    await mkdir(dirname(join(this.project.dir, target)), { recursive: true });
    await writeFile(join(this.project.dir, target), `${block.code}\n`);
    // Tests and text do not change the running organism; everything else may (organism.yaml, .env,
    // listener and tool modules, scripts, schemas).
    if (!/^test\/|\.md$/.test(target)) this.changed = block;
    this.typesStale = true;
    if (target === 'organism.yaml') return validateYaml(block, block.code, { fragment: false });
    return PASSED;
  }

  /** A ```ts block: a module at the project's root, type-checked with the project's types. */
  private async typecheck(block: DocBlock): Promise<BlockResult> {
    const file = `doctest-L${block.line}.ts`;
    await writeFile(join(this.project.dir, file), `${block.code}\n`);
    try {
      return await this.tsc(block, file);
    } finally {
      await rm(join(this.project.dir, file), { force: true });
    }
  }

  /** A marked test file: written where the marker says, type-checked, and run with vitest. */
  private async test(block: DocBlock): Promise<BlockResult> {
    const target = inProject(block.path!);
    if (!target) return fail(`${at(block)}: the marker names '${block.path}', not a path inside the project`);
    await mkdir(dirname(join(this.project.dir, target)), { recursive: true });
    await writeFile(join(this.project.dir, target), `${block.code}\n`);
    const typed = await this.tsc(block, target);
    if (!typed.ok) return typed;
    const ran = await this.bin('vitest/vitest.mjs', ['run', target]);
    if (ran.code === 0 && /Tests\s+.*\d+ passed/.test(ran.stdout) && !/\bfailed\b/.test(ran.stdout))
      return PASSED;
    return fail(
      `${at(block)}: the test file ${target} did not pass (vitest run, exit ${ran.code})\n${output(ran)}`,
    );
  }

  /**
   * A program of the project's node_modules, as its bin (what npx runs, without npx's own start).
   */
  private bin(script: string, args: string[]): Promise<Ran> {
    return sh(process.execPath, [join(this.project.dir, 'node_modules', script), ...args], this.project.dir, {
      env: this.project.env,
      timeoutMs: this.options.commandTimeoutMs,
    });
  }

  /**
   * tsc over `file` with the project's tsconfig and the types `organism types` writes from the
   * page's organism.yaml as it is now; errors in `file` are named by their line in the page.
   */
  private async tsc(block: DocBlock, file: string): Promise<BlockResult> {
    const dir = this.project.dir;
    // As `npm test`'s pretest does; when organism.yaml cannot be read now the types are the last
    // ones written, and tsc says what does not fit.
    if (this.typesStale) {
      await this.bin('organism/bin/organism.js', ['types']);
      this.typesStale = false;
    }
    // The project's own tsconfig with the block added: what the block's module would be checked
    // with in the reader's project (its other files bring in what they reference, @types/node).
    const config = 'tsconfig.doctest.json';
    const include = await readFile(join(dir, 'tsconfig.json'), 'utf8')
      .then((text) => (JSON.parse(text) as { include?: string[] }).include ?? [])
      .catch(() => ['organism-env.d.ts']);
    await writeFile(
      join(dir, config),
      JSON.stringify({ extends: './tsconfig.json', include: [...include, file] }),
    );
    try {
      const ran = await this.bin('typescript/bin/tsc', ['--noEmit', '-p', config]);
      if (ran.code === 0) return PASSED;
      // This block's errors only: another file's are its own block's to report.
      const errors = ownErrors(`${ran.stdout}${ran.stderr}`, file).replaceAll(
        new RegExp(`^${escapeRegExp(file)}\\((\\d+),(\\d+)\\)`, 'gm'),
        (_, line: string, column: string) => `${block.page}:${block.line + Number(line)}:${column}`,
      );
      if (!errors) return PASSED;
      return fail(`${at(block)}: the \`\`\`${block.lang} block does not type-check\n${errors}`);
    } finally {
      await rm(join(dir, config), { force: true });
    }
  }
}

/**
 * organism.yaml (`fragment`: the top-level keys a block shows, completed with the init project's
 * required keys) against organism.schema.json; each problem named by its line in the page.
 */
export function validateYaml(
  block: DocBlock,
  text: string,
  { fragment }: { fragment: boolean },
): BlockResult {
  const shown = `${block.page}:${block.line}`;
  const parsed = parseConfigText(text, shown);
  const issues = parsed.source
    ? (() => {
        const data = toPlain(parsed.source) as Record<string, unknown> | null;
        if (data === null || typeof data !== 'object' || Array.isArray(data)) return [];
        if (fragment) {
          data.organism ??= { name: 'doctest' };
          data.listeners ??= [{ name: 'hello', handler: './listeners/hello.ts', tools: ['word_count'] }];
        }
        return validateAgainstSchema(data, parsed.source);
      })()
    : parsed.issues;
  if (issues.length === 0) return PASSED;
  const lines = issues.map((issue) => {
    const line = issue.line === undefined ? block.line : block.line + issue.line;
    const path = issue.path ? ` ${issue.path}:` : '';
    return `${block.page}:${line}${issue.column ? `:${issue.column}` : ''}:${path} ${issue.message}`;
  });
  return fail(
    `${at(block)}: the \`\`\`${block.lang} block is not a valid organism.yaml\n${lines.join('\n')}`,
  );
}

/** The errors tsc printed for `file` (each with its indented continuation lines). */
function ownErrors(output: string, file: string): string {
  const kept: string[] = [];
  let inFile = false;
  for (const line of output.split('\n')) {
    if (/^\s/.test(line) && line.trim()) {
      if (inFile) kept.push(line);
      continue;
    }
    inFile = line.startsWith(`${file}(`);
    if (inFile) kept.push(line);
  }
  return kept.join('\n').trim();
}

function escapeRegExp(text: string): string {
  return text.replaceAll(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function at(block: DocBlock): string {
  return `${block.page}:${block.line}`;
}

function fail(message: string): BlockResult {
  return { ok: false, message };
}

/** `path` normalized, when it stays inside the project. */
function inProject(path: string): string | undefined {
  const normal = normalize(path);
  return isAbsolute(normal) || normal.startsWith('..') ? undefined : normal;
}

function output(ran: Ran): string {
  const parts = [];
  if (ran.stdout.trim()) parts.push(`--- stdout:\n${tail(ran.stdout, 60)}`);
  if (ran.stderr.trim()) parts.push(`--- stderr:\n${tail(ran.stderr, 60)}`);
  return parts.join('\n') || '(no output)';
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((l) => prefix + l)
    .join('\n');
}
