// One thread: its messages in order, as who sent what to whom. Tool calls carry their audit record
// (verdict, rule, suggestion, outcome), agent turns their tokens and backend, failures their cause,
// approval requests their decision or the controls to make one.
import { api } from '../lib/api.js';
import { clock, field, jsonField } from '../lib/format.js';
import { useLive } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { useState } from '../vendor/hooks.js';
import { Component } from '../vendor/preact.js';
import { ApprovalActions } from './approval-actions.js';
import { failureText, Json, Loading, Problem, payload, ThreadState, threadState, Verdict } from './common.js';
import { OrganismGraph } from './graph.js';
import { Waterfall } from './waterfall.js';

function ModelTurn({ m }) {
  const calls = jsonField(m.payload, 'calls');
  const text = field(m.payload, 'text');
  return html`<div class="detail">
    <p>turn ${field(m.payload, 'turn')} · <span data-testid="tokens">${field(m.payload, 'input_tokens')} in / ${field(m.payload, 'output_tokens')} out</span>
      · thread total ${field(m.payload, 'thread_tokens')} · backend <code>${field(m.payload, 'backend')}</code></p>
    ${text ? html`<blockquote>${text}</blockquote>` : null}
    ${Array.isArray(calls) && calls.length > 0 ? html`<p>asks for: ${calls.map((c) => html`<code>${c.name}</code> `)}</p>` : null}
  </div>`;
}

function ToolCall({ m, record }) {
  return html`<div class="detail">
    <p><code>${field(m.payload, 'tool')}</code> with <${Json} value=${jsonField(m.payload, 'args')} fold=${200} /></p>
    ${
      record
        ? html`<dl class="facts">
          <dt>verdict</dt><dd><${Verdict} value=${record.verdict} /></dd>
          ${record.rule_id ? html`<dt>rule</dt><dd><code>${record.rule_id}</code></dd>` : null}
          ${record.reason ? html`<dt>reason</dt><dd>${record.reason}</dd>` : null}
          ${record.suggestion ? html`<dt>suggestion</dt><dd>${record.suggestion}</dd>` : null}
          <dt>outcome</dt><dd>${record.outcome}${record.code ? html` <code>${record.code}</code>` : null}${record.message ? ` · ${record.message}` : ''}</dd>
          <dt>took</dt><dd>${Math.round(record.duration_ms)} ms</dd>
        </dl>`
        : html`<p class="muted">no audit record yet</p>`
    }
  </div>`;
}

function ToolResult({ m }) {
  return html`<div class="detail">
    <p><code>${field(m.payload, 'tool')}</code> · status <strong>${field(m.payload, 'status')}</strong></p>
    <${Json} value=${jsonField(m.payload, 'result')} />
  </div>`;
}

function ApprovalRequest({ m, open, session, reload }) {
  const id = field(m.payload, 'approval');
  return html`<div class="detail">
    <p>approval <code>${id}</code> for <code>${field(m.payload, 'tool')}</code> (${field(m.payload, 'why')}; verdict${' '}
      <${Verdict} value=${field(m.payload, 'verdict') || null} />; needs ${field(m.payload, 'role')})</p>
    ${open ? (session.can.approve ? html`<${ApprovalActions} approval=${open} onDone=${reload} />` : html`<p class="muted">waiting for a decision</p>`) : null}
  </div>`;
}

function ApprovalDecision({ m }) {
  const reason = field(m.payload, 'reason');
  return html`<div class="detail">
    <p><strong>${field(m.payload, 'decision')}</strong> by ${field(m.payload, 'by')}${reason ? `: ${reason}` : ''}</p>
  </div>`;
}

function Failure({ m }) {
  return html`<div class="detail"><p class="error-text">${field(m.payload, 'code')} · ${failureText(m.payload)}</p></div>`;
}

function Entry({ m, index, record, open, session, reload }) {
  let detail = null;
  if (m.kind === 'model-turn') detail = html`<${ModelTurn} m=${m} />`;
  else if (m.kind === 'tool-call') detail = html`<${ToolCall} m=${m} record=${record} />`;
  else if (m.kind === 'tool-result') detail = html`<${ToolResult} m=${m} />`;
  else if (m.kind === 'approval-request')
    detail = html`<${ApprovalRequest} m=${m} open=${open} session=${session} reload=${reload} />`;
  else if (m.kind === 'approval-decision') detail = html`<${ApprovalDecision} m=${m} />`;
  else if (m.kind === 'failure') detail = html`<${Failure} m=${m} />`;
  return html`<li class=${`entry e-${m.kind}`} data-kind=${m.kind} data-id=${m.id}>
    <div class="head">
      <span class="seq">${index + 1}</span>
      <time datetime=${m.time}>${clock(m.time)}</time>
      <span class="route"><strong>${m.from}</strong><strong>${m.to}</strong></span>
      <span class=${`kind k-${m.kind}`}>${m.kind}</span>
    </div>
    ${detail}
    ${payload(m.payload, { fold: detail ? 0 : 12, label: 'XML' })}
  </li>`;
}

/**
 * An entry is drawn again only when what it shows changed: a message never changes once recorded
 * (same id), so a live update of a long thread redraws the new entries, not all of them.
 */
class StableEntry extends Component {
  shouldComponentUpdate(next) {
    const p = this.props;
    return (
      p.m.id !== next.m.id ||
      p.index !== next.index ||
      p.record?.hash !== next.record?.hash ||
      p.open?.id !== next.open?.id ||
      p.session !== next.session
    );
  }

  // Entry has no state of its own: called, not mounted, so an entry is one component, not two.
  render(props) {
    return Entry(props);
  }
}

export function ThreadPage({ session, arg: id }) {
  const touches = (e) => e.thread === id;
  const thread = useLive(() => api(`/threads/${encodeURIComponent(id)}`), [id], { when: touches });
  const audit = useLive(() => api(`/audit?type=call&limit=1000&thread=${encodeURIComponent(id)}`), [id], {
    when: (e) => touches(e) && (e.type === 'tool' || e.kind === 'tool-result'),
  });
  const approvals = useLive(() => api(`/approvals?thread=${encodeURIComponent(id)}`), [id], {
    when: (e) => e.type === 'approval' && e.thread === id,
  });
  const listeners = useLive(() => api('/listeners'), []);
  const [killError, setKillError] = useState();
  const records = new Map((audit.data?.records ?? []).map((r) => [r.call_id, r]));
  const pending = (approvals.data?.approvals ?? []).filter((a) => a.thread === id);
  const reload = () => {
    thread.reload();
    approvals.reload();
  };
  const kill = async () => {
    try {
      await api(`/threads/${encodeURIComponent(id)}/kill`, { body: {} });
      setKillError(undefined);
      thread.reload();
    } catch (e) {
      setKillError(e);
    }
  };
  const view = thread.data;
  return html`<section aria-labelledby="thread-title">
    <p><a href="#/threads">← Threads</a></p>
    <h1 id="thread-title">Thread <code class="mono">${id}</code></h1>
    <${Problem} error=${thread.error} />
    ${
      view
        ? html`<p class="thread-meta">
            <${ThreadState} testid="thread-status" state=${threadState(view.status, {
              failed: view.messages.some((m) => m.kind === 'failure'),
              waiting: pending.length > 0,
            })} />
            · started ${clock(view.created)} · <span data-testid="message-count">${view.messages.length}</span> messages
            ${session.can.kill && view.status === 'active' ? html` <button type="button" class="danger" onClick=${kill}>Kill thread</button>` : null}
          </p>
          <${Problem} error=${killError} />
          <${Waterfall} messages=${view.messages} running=${view.status === 'active'} />
          ${
            listeners.data
              ? html`<h2>Route</h2>
                <${OrganismGraph} listeners=${listeners.data.listeners}
                  route=${view.messages.filter((m) => m.kind === 'message' || m.kind === 'tool-call').map((m) => [m.from, m.to])} />`
              : null
          }
          <h2>Messages</h2>
          <ol class="timeline" aria-label="Messages">
            ${view.messages.map(
              (m, i) =>
                html`<${StableEntry} key=${m.id} m=${m} index=${i} record=${records.get(m.id)}
                  open=${m.kind === 'approval-request' ? pending.find((a) => a.id === field(m.payload, 'approval')) : undefined}
                  session=${session} reload=${reload} />`,
            )}
          </ol>`
        : thread.error
          ? null
          : html`<${Loading} what="Loading the thread…" />`
    }
  </section>`;
}
