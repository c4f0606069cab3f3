// Audit: the log newest first, filtered by verdict, tool, listener and type, a page at a time.
import { api } from '../lib/api.js';
import { clock } from '../lib/format.js';
import { useLive } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { useState } from '../vendor/hooks.js';
import { Loading, Problem, ThreadLink, Verdict } from './common.js';

function Select({ label, value, set, options }) {
  return html`<label>${label}
    <select value=${value} onChange=${(e) => set(e.currentTarget.value)}>
      <option value="">any</option>
      ${options.map((o) => html`<option value=${o}>${o}</option>`)}
    </select></label>`;
}

export function AuditPage() {
  const [verdict, setVerdict] = useState('');
  const [type, setType] = useState('');
  const [tool, setTool] = useState('');
  const [listener, setListener] = useState('');
  const [older, setOlder] = useState([]);
  const listeners = useLive(() => api('/listeners'), []);
  const tools = useLive(() => api('/tools'), []);
  const query = new URLSearchParams({ limit: '100' });
  if (verdict) query.set('verdict', verdict);
  if (type) query.set('type', type);
  if (tool) query.set('tool', tool);
  if (listener) query.set('listener', listener);
  const page = useLive(
    () => {
      setOlder([]);
      return api(`/audit?${query}`);
    },
    [verdict, type, tool, listener],
    { when: (e) => e.type === 'tool' || e.type === 'approval' },
  );
  const more = async () => {
    const last = older.length ? older[older.length - 1] : page.data;
    if (!last?.next) return;
    const next = await api(`/audit?${query}&cursor=${last.next}`);
    setOlder([...older, next]);
  };
  const records = [page.data, ...older].flatMap((p) => p?.records ?? []);
  const tail = older.length ? older[older.length - 1] : page.data;
  return html`<section aria-labelledby="audit-title">
    <h1 id="audit-title">Audit</h1>
    <div class="filters">
      <${Select} label="Verdict" value=${verdict} set=${setVerdict} options=${['allow', 'warn', 'deny', 'none']} />
      <${Select} label="Type" value=${type} set=${setType} options=${['call', 'threat', 'change', 'approval']} />
      <${Select} label="Tool" value=${tool} set=${setTool} options=${(tools.data?.tools ?? []).map((t) => t.tool)} />
      <${Select} label="Listener" value=${listener} set=${setListener} options=${(listeners.data?.listeners ?? []).map((l) => l.name)} />
    </div>
    <${Problem} error=${page.error} />
    ${page.data || page.error ? null : html`<${Loading} what="Loading audit records…" />`}
    <table class="grid" aria-label="Audit records">
      <thead><tr>
        <th scope="col">Time</th><th scope="col">Type</th><th scope="col">Listener</th><th scope="col">Tool</th>
        <th scope="col">Verdict</th><th scope="col">Rule</th><th scope="col">Outcome</th><th scope="col">Why</th><th scope="col">Thread</th>
      </tr></thead>
      <tbody>
        ${records.map(
          (r) => html`<tr data-type=${r.type}>
            <td>${clock(r.time)}</td>
            <td>${r.type}</td>
            <td>${r.listener ?? ''}</td>
            <td>${r.tool ? html`<code>${r.tool}</code>` : ''}</td>
            <td>${r.type === 'call' ? html`<${Verdict} value=${r.verdict} />` : (r.decision ?? '')}</td>
            <td>${r.rule_id ? html`<code>${r.rule_id}</code>` : ''}</td>
            <td>${r.outcome ?? ''}${r.code ? html` <code>${r.code}</code>` : null}</td>
            <td>${[r.reason, r.suggestion && `suggestion: ${r.suggestion}`, r.by && `by ${r.by}`].filter(Boolean).join(' · ')}</td>
            <td><${ThreadLink} id=${r.thread} /></td>
          </tr>`,
        )}
      </tbody>
    </table>
    ${tail?.next ? html`<button type="button" onClick=${more}>Older records</button>` : html`<p class="muted">${records.length} records.</p>`}
  </section>`;
}
