/**
 * What the analysis produces: one `Cmd` per simple command that would run, and the `Analysis` of
 * a whole command line. Rules read these; only analyze.ts builds them.
 */
import type { InlineNet } from './inline-risk.ts';
import type { Redirect } from './parse.ts';
import type { ShellEnv } from './paths.ts';
import type { Word } from './tokenizer.ts';

export interface Cmd {
  /** Basename of the command word (`/usr/bin/rm` -> `rm`); '' for a line of only redirects or assignments. */
  name: string;
  /** The command word as written (`./install.sh`). */
  argv0: string;
  /** Arguments after the command word, quotes removed. */
  args: string[];
  argWords: Word[];
  redirects: Redirect[];
  /** Wrappers peeled off, outermost first (`sudo`, `timeout`, `xargs`, `bash -c` shows as `bash`). */
  wrappers: string[];
  /** The command word is a variable or an unknown substitution. */
  dynamicName: boolean;
  /**
   * The command word has an unquoted `*`, `?`, `[` or `{`: a glob or brace expansion, or find's `{}`,
   * makes the name at run time.
   */
  globName: boolean;
  /** Arguments come from stdin (xargs), so targets are unknown. */
  viaXargs: boolean;
  /** A shell given `-c SCRIPT`: its script is judged as commands of its own. */
  inlineScript: boolean;
  /** Text fed to stdin when known: here-string, here-document, or the literal output of echo/printf before `|`. */
  stdinText: string | null;
  /** stdinText was parsed and judged as a script (a shell reading it). */
  stdinJudged: boolean;
  /** Commands inside this command's substitutions (arguments, redirections, here-documents, assignments). */
  subCmds: Cmd[];
  /** The same, per word (a here-document's are under its delimiter word). */
  wordSubs: Map<Word, Cmd[]>;
  /** The stages of this command's pipeline, this command at `stage`. */
  pipeline: Cmd[];
  stage: number;
  /** Source text of the simple command, for the verdict's `segment`. */
  segment: string;
  depth: number;
  /** Directory set by an earlier literal `cd` in the command line (`cd / && rm -rf *`), or null when unknown. */
  cwd: string | null;
  /** Files written by a download (curl -o, wget -O, curl > f) or decode anywhere in the command line; shared by all its commands. */
  downloads: ReadonlySet<string>;
  /** Absolute directory the command runs in, when known (the start directory, then literal `cd`s). */
  dir: string | null;
  /** What the guard knows of where the line runs (workspace, start directory, shell mode). */
  env: ShellEnv;
  /** A command `find -exec` runs: its `{}` are the files this find selects. */
  foundBy: Cmd | null;
  /** Inline interpreter code (python -c, node -e...) that calls out in a way the guard cannot read: why. */
  inlineUnjudged: string | null;
  /** What inline interpreter code does with the network (inline-risk.ts), or null when it has none. */
  inlineNet: InlineNet | null;
  /**
   * The privilege wrapper this command runs under and its own words (`sudo -S -u#-1`), or null;
   * the words are gone from `args` once the wrapper is peeled off.
   */
  elevation: readonly string[] | null;
  /** Variables the line sets to literal values (`f=/etc/shadow; cat $f`); shared by all its commands. */
  vars: ReadonlyMap<string, string>;
  /** File descriptors the line opens on a network socket (`exec 3<>/dev/tcp/h/p`); shared by all its commands. */
  netFds: ReadonlySet<string>;
}

export interface Analysis {
  cmds: Cmd[];
  /** Every script text parsed (the command and each nested script), for rules on raw text. */
  sources: string[];
  /** The working directory while analysing: what the last literal `cd` set. */
  cwd: string | null;
  /** The same as an absolute path, starting from env.cwd; null when unknown. */
  dir: string | null;
  downloads: Set<string>;
  env: ShellEnv;
  vars: Map<string, string>;
  netFds: Set<string>;
}
