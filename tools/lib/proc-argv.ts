/**
 * A small, quote-aware tokenizer for run_command. It follows POSIX sh quoting (single quotes are
 * literal, double quotes allow \" \\ \$ \` escapes, a backslash outside quotes escapes the next
 * character) but expands nothing: no variables, globs or substitutions. It is used two ways:
 *
 * - no-shell mode: `parseArgv` turns the command into argv for spawn(shell: false). Any shell syntax
 *   outside quotes (operators, command substitution) is an error, because without a shell it would
 *   silently become a literal argument and do something other than what the caller meant.
 * - shell mode with `allowed_commands`: `splitCommandList` cuts the command at `|`, `&&`, `||`, `;`,
 *   `&` and newlines so each simple command can be checked, and refuses everything that could run
 *   a program the check did not see (substitution, grouping, redirection to files).
 */
import { CommandError } from '../../src/errors.ts';

export type ShellToken =
  | {
      kind: 'word';
      value: string;
      start: number;
      end: number;
      /** `$(`, `` ` ``, `<(` or `>(` seen outside single quotes: a shell would run something here. */
      substitution: boolean;
    }
  | { kind: 'op'; value: string; start: number; end: number };

/** Longest first, so `&&` wins over `&`. */
const OPERATORS = [
  '&&',
  '||',
  ';;',
  '>>',
  '<<',
  '>&',
  '<&',
  '&>',
  '|&',
  '>|',
  '<>',
  '|',
  '&',
  ';',
  '>',
  '<',
  '(',
  ')',
  '\n',
];

function operatorAt(s: string, i: number): string | undefined {
  return OPERATORS.find((op) => s.startsWith(op, i));
}

function column(i: number): number {
  return i + 1;
}

/** Splits a command into words and operators. Throws command.syntax on an unterminated quote. */
export function tokenize(command: string): ShellToken[] {
  const tokens: ShellToken[] = [];
  let i = 0;
  const n = command.length;
  while (i < n) {
    const c = command[i]!;
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    // A comment starts only at the beginning of a word; sh ignores the rest of the line.
    if (c === '#') {
      while (i < n && command[i] !== '\n') i++;
      continue;
    }
    const op = operatorAt(command, i);
    if (op !== undefined) {
      tokens.push({ kind: 'op', value: op, start: i, end: i + op.length });
      i += op.length;
      continue;
    }
    const start = i;
    let value = '';
    let substitution = false;
    while (i < n) {
      const ch = command[i]!;
      if (ch === ' ' || ch === '\t' || ch === '\r' || operatorAt(command, i) !== undefined) break;
      if (ch === "'") {
        const close = command.indexOf("'", i + 1);
        if (close < 0) {
          throw new CommandError('command.syntax', `unterminated single quote at column ${column(i)}`, {
            column: column(i),
          });
        }
        value += command.slice(i + 1, close);
        i = close + 1;
        continue;
      }
      if (ch === '"') {
        const open = i;
        i++;
        let closed = false;
        while (i < n) {
          const d = command[i]!;
          if (d === '"') {
            closed = true;
            i++;
            break;
          }
          if (d === '\\' && i + 1 < n && '"\\$`\n'.includes(command[i + 1]!)) {
            if (command[i + 1] !== '\n') value += command[i + 1];
            i += 2;
            continue;
          }
          if (d === '`' || (d === '$' && command[i + 1] === '(')) substitution = true;
          value += d;
          i++;
        }
        if (!closed) {
          throw new CommandError('command.syntax', `unterminated double quote at column ${column(open)}`, {
            column: column(open),
          });
        }
        continue;
      }
      if (ch === '\\') {
        if (i + 1 >= n) {
          throw new CommandError(
            'command.syntax',
            `trailing backslash at column ${column(i)} escapes nothing`,
            {
              column: column(i),
            },
          );
        }
        // Backslash-newline is a line continuation in sh: it disappears.
        if (command[i + 1] !== '\n') value += command[i + 1];
        i += 2;
        continue;
      }
      if (ch === '`' || (ch === '$' && command[i + 1] === '(')) substitution = true;
      value += ch;
      i++;
    }
    tokens.push({ kind: 'word', value, start, end: i, substitution });
  }
  return tokens;
}

function needsShell(what: string, at: number): CommandError {
  return new CommandError(
    'command.needs_shell',
    `${what} at column ${column(at)} needs a shell, and run_command runs programs without one. ` +
      'Run one program per call, quote the text if it is meant literally, or set `shell: true` in ' +
      "this listener's tool_config for run_command.",
    { column: column(at) },
  );
}

function describeOp(op: string): string {
  return op === '\n' ? 'a newline (command separator)' : `shell operator '${op}'`;
}

/** argv for spawn(shell: false). Throws command.syntax or command.needs_shell. */
export function parseArgv(command: string): string[] {
  const argv: string[] = [];
  for (const t of tokenize(command)) {
    if (t.kind === 'op') throw needsShell(describeOp(t.value), t.start);
    if (t.substitution) throw needsShell('command substitution ($(...) or `...`)', t.start);
    argv.push(t.value);
  }
  if (argv.length === 0) throw new CommandError('command.syntax', 'command is empty: give a program to run');
  return argv;
}

/** Operators that only join commands; each side is still one simple command we can check. */
const LIST_OPERATORS = new Set(['&&', '||', '|', '&', ';', '\n', '|&']);

/**
 * Cuts a shell command into its simple commands (argv each) for the allowed_commands check in shell
 * mode. Refuses what could run or write something unchecked: substitutions, subshells and groups,
 * and redirections other than duplicating a descriptor (`2>&1`, `>&2`).
 */
export function splitCommandList(command: string): string[][] {
  const tokens = tokenize(command);
  const list: string[][] = [];
  let current: string[] = [];
  const refuse = (what: string, at: number) =>
    new CommandError(
      'command.not_allowed',
      `${what} at column ${column(at)} is not allowed while allowed_commands is set: with a shell, ` +
        'only pipes and lists (|, &&, ||, ;, &) of allowed commands may run.',
      { column: column(at), rule_id: 'run_command.allowed_commands' },
    );
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (t.kind === 'word') {
      if (t.substitution) throw refuse('command substitution', t.start);
      current.push(t.value);
      continue;
    }
    if (LIST_OPERATORS.has(t.value)) {
      if (current.length > 0) list.push(current);
      current = [];
      continue;
    }
    if (t.value === '>&' || t.value === '<&') {
      const target = tokens[k + 1];
      const prev = tokens[k - 1];
      if (target?.kind === 'word' && /^(\d+|-)$/.test(target.value)) {
        // `2>&1`: the digit before belongs to the redirection, not to the command's argv.
        if (prev?.kind === 'word' && prev.end === t.start && /^\d+$/.test(prev.value) && current.length > 1) {
          current.pop();
        }
        k++;
        continue;
      }
    }
    throw refuse(describeOp(t.value), t.start);
  }
  if (current.length > 0) list.push(current);
  if (list.length === 0) throw new CommandError('command.syntax', 'command is empty: give a program to run');
  return list;
}
