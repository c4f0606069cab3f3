/** How `organism tail` prints the approval events of the stream. */
import { describe, expect, it } from 'vitest';
import { formatEvent } from '../../src/cli/commands/tail.ts';

describe('organism tail, approval events', () => {
  const event = (fields: object) => ({
    type: 'approval',
    kind: 'approval',
    thread: '0f1e2d3c-aaaa-bbbb',
    listener: 'ops',
    tool: 'run_command',
    time: '2026-11-25T02:00:00.000Z',
    ...fields,
  });
  it('says who decided and why', () => {
    expect(
      formatEvent(
        event({ event: 'denied', approval: { id: 'ap_1', decided_by: 'root', reason: 'not today' } }),
      ),
    ).toBe('2026-11-25T02:00:00.000Z 0f1e2d3c approval denied ap_1 ops -> run_command by root: not today');
  });
  it('shows a waiting call without a decider', () => {
    expect(
      formatEvent(event({ event: 'requested', approval: { id: 'ap_2', decided_by: null, reason: null } })),
    ).toBe('2026-11-25T02:00:00.000Z 0f1e2d3c approval requested ap_2 ops -> run_command');
  });
});
