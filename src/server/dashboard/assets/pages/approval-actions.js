// Approve or deny one pending call, with a reason (operator, or admin where tool_config says so).
import { api } from '../lib/api.js';
import { html } from '../lib/html.js';
import { useState } from '../vendor/hooks.js';
import { Problem } from './common.js';

export function ApprovalActions({ approval, onDone }) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState();
  const decide = async (action) => {
    setBusy(true);
    try {
      await api(`/approvals/${encodeURIComponent(approval.id)}/${action}`, {
        body: reason.trim() ? { reason: reason.trim() } : {},
      });
      setError(undefined);
      onDone?.();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const id = `reason-${approval.id}`;
  return html`<div class="approval-actions" data-approval=${approval.id}>
    <label for=${id}>Reason</label>
    <input id=${id} type="text" maxlength="1000" value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} />
    <button type="button" class="approve" disabled=${busy} onClick=${() => decide('approve')}>Approve</button>
    <button type="button" class="deny" disabled=${busy} onClick=${() => decide('deny')}>Deny</button>
    ${approval.role === 'admin' ? html`<span class="muted">needs admin</span>` : null}
    <${Problem} error=${error} />
  </div>`;
}
