/** Audit records for the tests in this folder. */
import type { CallRecord } from '../../src/audit/record.ts';

/** Call record number `n` (time, thread and call_id follow from it), with `extra` on top. */
export function record(n: number, extra: Partial<CallRecord> = {}): CallRecord {
  return {
    type: 'call',
    time: new Date(1_700_000_000_000 + n).toISOString(),
    thread: `t${n}`,
    listener: 'alice',
    trust: 'medium',
    tool: 'noop',
    call_id: `c${n}`,
    input: { n },
    segment: null,
    verdict: null,
    rule_id: null,
    reason: null,
    suggestion: null,
    outcome: 'ok',
    code: null,
    message: null,
    duration_ms: 0.5,
    ...extra,
  };
}
