// Threads: the list (status, participants, age) that follows the stream, with filters and a
// go-to-id box; operators also get the inject form.
import { api } from '../lib/api.js';
import { age } from '../lib/format.js';
import { useLive, useTick } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { useState } from '../vendor/hooks.js';
import { Loading, Problem, ThreadLink, ThreadState, threadState } from './common.js';
import { InjectForm } from './inject.js';

export function ThreadsPage({ session }) {
  const [status, setStatus] = useState('');
  const [listener, setListener] = useState('');
  const [goto, setGoto] = useState('');
  useTick(5000);
  const listeners = useLive(() => api('/listeners'), []);
  const query = new URLSearchParams({ limit: '100' });
  if (status) query.set('status', status);
  if (listener) query.set('listener', listener);
  const threads = useLive(() => api(`/threads?${query}`), [status, listener], {
    when: (e) => e.type === 'message' || e.type === 'lifecycle',
  });
  // Which threads failed or wait for a person: the bus's status says only active / idle / stopped.
  const failures = useLive(() => api('/messages?kind=failure&limit=1000'), [], {
    when: (e) => e.type === 'message' && e.kind === 'failure',
  });
  const approvals = useLive(() => api('/approvals'), [], { when: (e) => e.type === 'approval' });
  const failed = new Set((failures.data?.messages ?? []).map((m) => m.thread));
  const waiting = new Set((approvals.data?.approvals ?? []).map((a) => a.thread));
  const names = listeners.data?.listeners ?? [];
  const go = (e) => {
    e.preventDefault();
    if (goto.trim()) location.hash = `#/threads/${encodeURIComponent(goto.trim())}`;
  };
  return html`<section aria-labelledby="threads-title">
    <h1 id="threads-title">Threads</h1>
    <div class="filters">
      <label>Status
        <select value=${status} onChange=${(e) => setStatus(e.currentTarget.value)}>
          <option value="">any</option><option value="active">running or waiting</option>
          <option value="idle">done or failed</option><option value="stopped">stopped</option>
        </select></label>
      <label>Listener
        <select value=${listener} onChange=${(e) => setListener(e.currentTarget.value)}>
          <option value="">any</option>
          ${names.map((l) => html`<option value=${l.name}>${l.name}</option>`)}
        </select></label>
      <form class="goto" onSubmit=${go} method="post">
        <label>Thread id <input type="search" value=${goto} onInput=${(e) => setGoto(e.currentTarget.value)} /></label>
        <button type="submit">Open</button>
      </form>
    </div>
    <${Problem} error=${threads.error} />
    ${threads.data || threads.error ? null : html`<${Loading} what="Loading threads…" />`}
    <table class="grid" aria-label="Threads">
      <thead><tr>
        <th scope="col">Thread</th><th scope="col">Status</th><th scope="col">Participants</th>
        <th scope="col">Messages</th><th scope="col">Age</th><th scope="col">Last activity</th>
      </tr></thead>
      <tbody>
        ${(threads.data?.threads ?? []).map(
          (t) => html`<tr key=${t.thread} data-thread=${t.thread}>
            <td><${ThreadLink} id=${t.thread} /></td>
            <td><${ThreadState} state=${threadState(t.status, { failed: failed.has(t.thread), waiting: waiting.has(t.thread) })} /></td>
            <td>${t.participants.join(', ')}</td>
            <td class="num">${t.messages}${t.dropped ? ` (+${t.dropped} dropped)` : ''}</td>
            <td>${age(t.created)}</td>
            <td>${age(t.updated)} ago</td>
          </tr>`,
        )}
      </tbody>
    </table>
    ${threads.data ? html`<p class="muted">${threads.data.total} threads${threads.data.next ? ' (newest 100 shown)' : ''}.</p>` : null}
    ${session.can.inject ? html`<${InjectForm} listeners=${names} />` : null}
  </section>`;
}
