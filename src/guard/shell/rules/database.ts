/**
 * Databases: statements that drop or empty data, sent through a client's command line (-c, -e,
 * --eval), a here-string / here-document, or literal text piped in.
 */
import type { Cmd } from '../cmd.ts';
import { argsInclude, type ShellRule } from '../match.ts';

const SQL_CLIENTS = [
  'psql',
  'mysql',
  'mariadb',
  'sqlite3',
  'sqlite',
  'sqlcmd',
  'clickhouse-client',
  'clickhouse',
  'cockroach',
  'duckdb',
  'cqlsh',
  'snowsql',
  'bq',
  'trino',
  'presto',
  'isql',
  'sqlplus',
  'mycli',
  'pgcli',
  'litecli',
  'usql',
];
const MONGO_CLIENTS = ['mongo', 'mongosh'];
/** Per client, the options whose value is a statement (psql's -e only echoes, so it is not here). */
const STATEMENT_OPTIONS: Record<string, string[]> = {
  psql: ['-c', '--command'],
  pgcli: ['-c', '--command'],
  usql: ['-c', '--command'],
  mysql: ['-e', '--execute'],
  mariadb: ['-e', '--execute'],
  mycli: ['-e', '--execute'],
  cqlsh: ['-e', '--execute'],
  sqlite3: ['-cmd'],
  sqlite: ['-cmd'],
  litecli: ['-e', '--execute'],
  duckdb: ['-c', '-cmd'],
  sqlcmd: ['-q', '-Q'],
  'clickhouse-client': ['-q', '--query'],
  clickhouse: ['-q', '--query'],
  cockroach: ['-e', '--execute'],
  snowsql: ['-q', '--query'],
  trino: ['--execute'],
  presto: ['--execute'],
  sqlplus: [],
  isql: [],
  bq: [],
  mongo: ['--eval'],
  mongosh: ['--eval'],
};

/** All statement text a client invocation carries. */
function statements(c: Cmd): string {
  const parts: string[] = [];
  const a = c.args;
  const options = STATEMENT_OPTIONS[c.name] ?? [];
  const shortAttached = options.filter((o) => /^-[a-zA-Z]$/.test(o));
  for (let i = 0; i < a.length; i++) {
    const arg = a[i]!;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0 && options.includes(arg.slice(0, eq))) parts.push(arg.slice(eq + 1));
    else if (options.includes(arg)) parts.push(a[++i] ?? '');
    else if (shortAttached.some((o) => arg.startsWith(o) && arg.length > 2)) parts.push(arg.slice(2));
  }
  // sqlite3 / duckdb / bq query: statements may be plain positional words after the database file.
  if (c.name === 'sqlite3' || c.name === 'sqlite' || c.name === 'duckdb' || c.name === 'bq') {
    parts.push(
      a
        .filter((x) => !x.startsWith('-'))
        .slice(1)
        .join(' '),
    );
  }
  if (c.stdinText !== null) parts.push(c.stdinText);
  return parts.join(';\n');
}

/** Statement text with comments and string literals removed, upper-cased, split at `;`. */
export function sqlStatements(text: string): string[] {
  const cleaned = text
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/'(?:[^']|'')*'/g, "''")
    .replace(/"(?:[^"]|"")*"/g, '""')
    .toUpperCase();
  return cleaned
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
}

function sqlMatch(c: Cmd, test: (stmt: string) => boolean): boolean {
  const text = statements(c);
  return text.length > 0 && sqlStatements(text).some(test);
}

export const DATABASE_RULES: ShellRule[] = [
  {
    id: 'shell.database.sql_drop',
    severity: 'destructive',
    commands: SQL_CLIENTS,
    reason: 'DROP removes a database object and all its data.',
    suggestion: 'Take a backup first, or rename the object instead of dropping it.',
    match: (c) =>
      sqlMatch(c, (s) =>
        /^DROP\s+(TABLE|DATABASE|SCHEMA|VIEW|MATERIALIZED\s+VIEW|INDEX|USER|ROLE|KEYSPACE|COLUMNFAMILY|OWNED|SEQUENCE|FUNCTION|PROCEDURE|TRIGGER|TYPE|EXTENSION)\b/.test(
          s,
        ),
      ),
  },
  {
    id: 'shell.database.sql_truncate',
    severity: 'destructive',
    commands: SQL_CLIENTS,
    reason: 'TRUNCATE empties a table at once, with no WHERE and often no undo.',
    suggestion: 'Delete specific rows with a WHERE clause, inside a transaction.',
    match: (c) => sqlMatch(c, (s) => /^TRUNCATE\b/.test(s)),
  },
  {
    id: 'shell.database.sql_delete_all',
    severity: 'destructive',
    commands: SQL_CLIENTS,
    reason: 'DELETE without WHERE removes every row of the table.',
    suggestion: 'Add a WHERE clause naming the rows to delete, and run it in a transaction.',
    match: (c) => sqlMatch(c, (s) => /^(WITH\b[\s\S]*?\)\s*)?DELETE\b/.test(s) && !/\bWHERE\b/.test(s)),
  },
  {
    id: 'shell.database.sql_update_all',
    severity: 'destructive',
    commands: SQL_CLIENTS,
    reason: 'UPDATE without WHERE changes every row of the table.',
    suggestion: 'Add a WHERE clause naming the rows to change, and run it in a transaction.',
    match: (c) => sqlMatch(c, (s) => /^UPDATE\b[\s\S]*\bSET\b/.test(s) && !/\bWHERE\b/.test(s)),
  },
  {
    id: 'shell.database.sql_alter_drop',
    severity: 'risky',
    commands: SQL_CLIENTS,
    reason: 'ALTER TABLE ... DROP removes a column or constraint and its data.',
    suggestion: 'Take a backup first; prefer a migration that can be rolled back.',
    match: (c) => sqlMatch(c, (s) => /^ALTER\s+TABLE\b[\s\S]*\bDROP\b/.test(s)),
  },
  {
    id: 'shell.database.mongo_drop',
    severity: 'destructive',
    commands: MONGO_CLIENTS,
    reason: 'Drops a MongoDB database or collection, or deletes every document.',
    suggestion: 'Delete specific documents with a filter, after a backup (mongodump).',
    match: (c) => /\.(dropDatabase|drop)\s*\(|\.(deleteMany|remove)\s*\(\s*\{\s*\}\s*\)/.test(statements(c)),
  },
  {
    id: 'shell.database.redis_flush',
    severity: 'destructive',
    commands: ['redis-cli', 'valkey-cli', 'keydb-cli'],
    reason: 'FLUSHALL / FLUSHDB deletes every key.',
    suggestion: 'Delete specific keys (DEL / UNLINK), or use a separate database for scratch data.',
    match: (c) => argsInclude(c, 'flushall', 'flushdb') || /\bFLUSH(ALL|DB)\b/i.test(c.stdinText ?? ''),
  },
  {
    id: 'shell.database.redis_shutdown',
    severity: 'destructive',
    commands: ['redis-cli', 'valkey-cli', 'keydb-cli'],
    reason: 'Shuts the Redis server down (or crashes it with DEBUG).',
    suggestion: 'Leave server lifecycle to its operator.',
    match: (c) =>
      argsInclude(c, 'shutdown') ||
      (argsInclude(c, 'debug') && argsInclude(c, 'segfault', 'crash-and-recover')),
  },
  {
    id: 'shell.database.drop_database_tool',
    severity: 'destructive',
    reason: 'Drops a whole database (dropdb, mysqladmin drop).',
    suggestion: 'Take a backup first; dropping databases is for an operator.',
    commands: ['dropdb', 'mysqladmin', 'dropuser'],
    match: (c) => c.name !== 'mysqladmin' || argsInclude(c, 'drop'),
  },
];
