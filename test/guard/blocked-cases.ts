// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell text, ${x} included
/**
 * Command lines that run `touch` without the word touch standing as a command name (each checked in
 * the real sh: it creates `f`), for the blocked_commands tests of the guard and of the real daemon;
 * and lines whose command names are as written, which must still run.
 */

/** Each runs `touch` (into f) in sh or bash without the word touch standing as a command name. */
export const BUILT_AT_RUN_TIME: readonly string[] = [
  // The four.
  'x=touch; $x f',
  't=tou; ${t}ch f',
  '${X:-touch} f',
  'set -- touch f; "$@"',
  // Parameters, substitutions, indirection.
  'sh -c \'"$1" f\' _ touch',
  'sh -c \'"$0" f\' touch',
  "bash -c 'y=touch; x=y; ${!x} f'",
  '$(printf %s tou)ch f',
  '`cat name.txt` f',
  "bash -c 'read c <<< touch; $c f'",
  "bash -c 'printf -v c touch; $c f'",
  // Behind the builtins and wrappers that run their word as a command.
  'x=touch; command $x f',
  'x=touch; exec $x f',
  "bash -c 'x=eval; builtin $x touch f'",
  'x=touch; env $x f',
  'x=touch; nice $x f',
  'x=touch; timeout 5 $x f',
  // eval, nested shells, here-docs and pipes into a shell, traps.
  'x=touch; eval "$x f"',
  'x=touch; eval \\$x f',
  'x=touch; bash -c "$x f"',
  'x=touch; sh <<EOF\n$x f\nEOF',
  'bash -c \'x=touch; bash <<< "$x f"\'',
  'x=touch; echo "$x f" | sh',
  'printf "%s f" "$(cat name.txt)" | bash',
  "trap 'touch f' EXIT",
  'x=touch; trap "$x f" EXIT',
  // Globs and braces in the command word: the shell makes the name from files or from text.
  '/usr/bin/tou?h f',
  '/usr/bin/tou[c]h f',
  '/usr/bin/touc* f',
  "bash -c '{tou,}ch f'",
  // Names bound at run time: aliases, hash -p, functions called by an expanded name.
  'alias t=touch\nt f',
  "bash -O expand_aliases -c 'alias t=touch\nt f'",
  "bash -c 'hash -p /usr/bin/touch t; t f'",
  'f() { "$@"; }; f touch f',
  // Placeholders filled at run time: find -exec {}, xargs -I.
  'find /usr/bin -name touch -exec {} f \\;',
  'echo touch | xargs -I % sh -c "% f"',
  // A script that is the output of a substitution.
  "bash -c 'bash <(echo touch f)'",
  "bash -c '. <(echo touch f)'",
  // coproc runs its command (bash).
  "bash -c 'coproc touch f'",
];

/** Not built at run time: these still run (blocked_commands names another program). */
export const PLAIN: readonly string[] = [
  'ls -la',
  'echo "$HOME" $x',
  'for f in *.txt; do cat "$f"; done',
  'find . -name "*.txt" -exec cat {} \\;',
  'find . -type f | xargs -I{} cat {}',
  'cat $(ls)',
  "sh -c 'echo hi'",
  'echo hi | sh',
  'x=1; echo $((x + 1))',
  'f() { echo "$1"; }; f hi',
  "trap 'rm -f lock' EXIT",
];
