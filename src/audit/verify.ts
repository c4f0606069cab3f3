/**
 * `organism audit --verify` in full: the log's chain (chain.ts), and the log against its
 * checkpoints (checkpoint.ts): that it is there when checkpoints say it existed, that it is the log
 * they name (its identity record), and that every checkpoint since the last change an operator
 * acknowledged still finds its record (count and hash) where it was. A cut in the middle breaks
 * the chain, or (chained over by a writer) leaves a checkpointed record missing; a cut at the end
 * leaves the log shorter than a checkpoint; a deleted log is missing; another log has another id.
 */
import { readFile } from 'node:fs/promises';
import { AuditError } from '../errors.ts';
import { type ChainReport, sha256, verifyChain } from './chain.ts';
import { type Checkpoint, parseCheckpoint } from './checkpoint.ts';
import { identityOf, type Survey } from './continuity.ts';
import type { AuditKey } from './key.ts';

export interface VerifyInput {
  log: string;
  /** The log's checkpoint file; undefined checks the chain only (a copy of a log elsewhere). */
  checkpoints: string | undefined;
  organism: string;
  keys: readonly AuditKey[];
}

export interface FullReport {
  /** The log's chain, as before checkpoints (records 0 when the log is missing). */
  chain: ChainReport;
  exists: boolean;
  /** Checkpoints read (0: none, or no file). */
  checkpoints: number;
  last: Checkpoint | undefined;
  identity: Survey['identity'];
  /** What fails, each one line naming what and where; empty when the log is proven. */
  problems: string[];
  /** What passes but is worth saying (acknowledged changes, records not checkpointed yet). */
  notes: string[];
}

async function readOptional(path: string, what: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new AuditError('audit.read', `cannot read ${what} ${path}: ${(error as Error).message}`, { path });
  }
}

export async function verifyAuditLog(input: VerifyInput): Promise<FullReport> {
  // Checkpoints first: the log read after them is at least as long as the last one says.
  const cpText =
    input.checkpoints === undefined
      ? undefined
      : await readOptional(input.checkpoints, 'the audit checkpoints');
  const logText = await readOptional(input.log, 'the audit log');
  const report: FullReport = {
    chain: verifyChain(logText ?? '', input.keys),
    exists: logText !== undefined,
    checkpoints: 0,
    last: undefined,
    identity: undefined,
    problems: [],
    notes: [],
  };
  const lines = (logText ?? '').split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (let i = 0; i < lines.length && report.identity === undefined; i++) {
    report.identity = identityOf(lines[i] as string, i + 1);
  }
  const checkpoints = cpText === undefined ? [] : readCheckpoints(cpText, input, report);
  report.checkpoints = checkpoints.length;
  report.last = checkpoints.at(-1);
  if (input.checkpoints === undefined) return report;
  if (cpText === undefined) withoutCheckpoints(input, report, lines.length);
  else if (report.last) againstCheckpoints(input, report, lines, checkpoints);
  return report;
}

/** The checkpoint file's own chain and seals; a problem when broken. */
function readCheckpoints(text: string, input: VerifyInput, report: FullReport): Checkpoint[] {
  const chain = verifyChain(text, input.keys);
  if (!chain.ok) {
    const where =
      chain.verdict === 'broken'
        ? `${input.checkpoints}:${chain.line}: checkpoint ${chain.line} ${chain.reason}`
        : `${input.checkpoints}: checkpoints carry no audit key`;
    report.problems.push(`CHECKPOINTS BROKEN: ${where}`);
  }
  const usable = chain.records;
  return text
    .split('\n')
    .slice(0, usable)
    .map((line) => parseCheckpoint(line))
    .filter((c): c is Checkpoint => c !== undefined);
}

function withoutCheckpoints(input: VerifyInput, report: FullReport, records: number): void {
  const { identity } = report;
  if (!report.exists) {
    report.notes.push(`no audit log and no checkpoints (${input.checkpoints}): nothing was recorded yet`);
    return;
  }
  if (identity) {
    report.problems.push(
      `NO CHECKPOINTS: ${input.log} names log id ${identity.record.log_id} of organism '${identity.record.organism}', but ${input.checkpoints} does not exist: the checkpoints were deleted, the project moved, or the log was copied here`,
    );
  } else if (records > 0) {
    report.notes.push(
      `${input.log} was written before checkpoints: records cut from its end or a replaced log cannot be told; the next writer gives it an identity and checkpoints`,
    );
  }
}

function againstCheckpoints(
  input: VerifyInput,
  report: FullReport,
  lines: string[],
  all: Checkpoint[],
): void {
  const last = all.at(-1) as Checkpoint;
  const at = (c: Checkpoint) => `checkpoint ${c.seq} (${c.time}, ${input.checkpoints})`;
  if (last.changed !== null) {
    report.problems.push(
      `CHANGED: ${last.changed} [found by a writer, recorded at ${at(last)}; not acknowledged: check the log, then run organism audit --acknowledge]`,
    );
  }
  // Checkpoints up to the last acknowledgement (or change found) may no longer match: that is what
  // was found, or acknowledged. Those after it must.
  let from = 0;
  for (let i = 0; i < all.length; i++) {
    const kind = all[i]?.kind;
    if (kind === 'acknowledged' || kind === 'changed') from = i;
  }
  for (const c of all.slice(0, from)) {
    if (c.kind === 'acknowledged')
      report.notes.push(`acknowledged by ${c.by ?? 'an operator'} at ${c.time}: ${c.detail ?? ''}`);
  }
  if (all[from]?.kind === 'acknowledged') {
    const c = all[from] as Checkpoint;
    report.notes.push(`acknowledged by ${c.by ?? 'an operator'} at ${c.time}: ${c.detail ?? ''}`);
  }
  const current = all.slice(from).filter((c) => c.records > 0);
  if (!report.exists || lines.length === 0) {
    if (last.records > 0) {
      report.problems.push(
        `MISSING: ${input.log} ${report.exists ? 'is empty' : 'does not exist'}, but ${at(last)} says it held ${last.records} records (log id ${last.log_id})`,
      );
    }
    return;
  }
  const identity = report.identity;
  if (last.records > 0 && (!identity || identity.record.log_id !== last.log_id)) {
    report.problems.push(
      identity
        ? `REPLACED: ${input.log}:${identity.line} names log id ${identity.record.log_id} of organism '${identity.record.organism}', but the checkpoints of organism '${input.organism}' name log id ${last.log_id}: this is another log`
        : `REPLACED: ${input.log} has no identity record, but the checkpoints name log id ${last.log_id}: this is another log`,
    );
    return;
  }
  if (last.records === 0) {
    report.problems.push(
      `${input.log} holds records, but ${at(last)} says the log was acknowledged as gone: it was put back or copied here`,
    );
    return;
  }
  const offsets = byteEnds(lines);
  for (const c of current) {
    if (c.records > lines.length) {
      report.problems.push(
        `CUT: ${input.log} has ${lines.length} records, but ${at(c)} says ${c.records}: records ${lines.length + 1}-${c.records} were cut from its end, or this is an older copy`,
      );
      return;
    }
    const line = lines[c.records - 1] as string;
    if (sha256(line) !== c.head || offsets[c.records - 1] !== c.bytes) {
      report.problems.push(
        `CUT: ${input.log}:${c.records}: record ${c.records} is not the one ${at(c)} sealed: records before it were cut or changed, or the log was replaced`,
      );
      return;
    }
  }
  const lastChecked = current.at(-1);
  if (lastChecked && lines.length > lastChecked.records) {
    report.notes.push(
      `records ${lastChecked.records + 1}-${lines.length} came after the last checkpoint (${lastChecked.time}): chained, not yet checkpointed`,
    );
  }
}

/** The byte offset where each line ends (its newline included). */
function byteEnds(lines: string[]): number[] {
  const out: number[] = [];
  let end = 0;
  for (const line of lines) {
    end += Buffer.byteLength(line, 'utf8') + 1;
    out.push(end);
  }
  return out;
}
