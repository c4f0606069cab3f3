/** Inline interpreter code (python -c, node -e, perl -e, ruby -e, php -r) the guard cannot read through. */
import type { ShellRule } from '../match.ts';

export const INLINE_RULES: ShellRule[] = [
  {
    id: 'shell.inline.unjudged_code',
    severity: 'risky',
    reason:
      'Runs inline interpreter code that calls the shell or deletes files in a way that cannot be checked (a command built at run time, eval, exec, __import__, decoding).',
    suggestion:
      'Put the command in the code as a literal string (os.system("ls -la")), or run the shell command directly.',
    match: (c) => c.inlineUnjudged !== null,
  },
];
