// Approvals: tool calls waiting for a person, with approve / deny and a reason for those allowed;
// the latest decisions from the audit log below.
import { api } from '../lib/api.js';
import { age, clock } from '../lib/format.js';
import { useLive, useTick } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { ApprovalActions } from './approval-actions.js';
import { Json, Loading, Problem, ThreadLink, Verdict } from './common.js';

export function ApprovalsPage({ session }) {
  useTick(5000);
  const list = useLive(() => api('/approvals'), [], { when: (e) => e.type === 'approval' });
  const decided = useLive(() => api('/audit?type=approval&limit=20'), [], {
    when: (e) => e.type === 'approval',
  });
  const pending = list.data?.approvals ?? [];
  return html`<section aria-labelledby="approvals-title">
    <h1 id="approvals-title">Approvals</h1>
    <${Problem} error=${list.error} />
    ${list.data || list.error ? null : html`<${Loading} what="Loading approvals…" />`}
    ${list.data && pending.length === 0 ? html`<p>No tool call is waiting for approval.</p>` : null}
    <ul class="approvals">
      ${pending.map(
        (a) => html`<li key=${a.id} class="card" data-approval=${a.id} data-thread=${a.thread}>
          <h2><code>${a.tool}</code> by ${a.listener}</h2>
          <dl class="facts">
            <dt>id</dt><dd><code>${a.id}</code></dd>
            <dt>thread</dt><dd><${ThreadLink} id=${a.thread} /></dd>
            <dt>why</dt><dd>${a.why}</dd>
            <dt>guard</dt><dd><${Verdict} value=${a.verdict} />${a.rule_id ? html` <code>${a.rule_id}</code>` : null}</dd>
            <dt>requested</dt><dd>${age(a.requested)} ago · expires ${clock(a.expires)}</dd>
            <dt>needs</dt><dd>${a.role}</dd>
          </dl>
          <p class="muted">Arguments as they will run${a.args_sha256 ? html` (SHA-256 <code>${a.args_sha256.slice(0, 12)}</code>)` : null}:</p>
          <${Json} value=${a.args} fold=${Number.POSITIVE_INFINITY} />
          ${session.can.approve ? html`<${ApprovalActions} approval=${a} onDone=${list.reload} />` : null}
        </li>`,
      )}
    </ul>
    <h2>Recent decisions</h2>
    <${Problem} error=${decided.error} />
    <table class="grid" aria-label="Recent decisions">
      <thead><tr><th scope="col">Time</th><th scope="col">Decision</th><th scope="col">Tool</th><th scope="col">Listener</th>
        <th scope="col">By</th><th scope="col">Reason</th><th scope="col">Thread</th></tr></thead>
      <tbody>${(decided.data?.records ?? []).map(
        (
          r,
        ) => html`<tr><td>${clock(r.time)}</td><td>${r.decision}</td><td><code>${r.tool}</code></td><td>${r.listener}</td>
          <td>${r.by ?? ''}</td><td>${r.reason ?? ''}</td><td><${ThreadLink} id=${r.thread} /></td></tr>`,
      )}</tbody>
    </table>
  </section>`;
}
