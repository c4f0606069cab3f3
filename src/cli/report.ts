/**
 * How the CLI reports what stops a command, shared by the commands that start or check an
 * organism (`validate`, `run`, `dev`): organism.yaml's problems, one line each as
 * file:line:column: key.path: message, then a count, so all three print a bad file alike.
 */
import { positionIssues } from '../config/issue-position.ts';
import { type ConfigError, formatConfigIssue } from '../errors.ts';
import type { CommandIo } from './io.ts';

/** Prints every issue of `error` (positioned in `file` as the user named it) and the count; returns 1. */
export async function reportConfigError(error: ConfigError, file: string, io: CommandIo): Promise<number> {
  const issues = await positionIssues(error.issues, file);
  for (const issue of issues) io.err(formatConfigIssue(issue));
  io.err(`${file}: ${issues.length} problem${issues.length === 1 ? '' : 's'} found`);
  return 1;
}
