// Tools per listener: every tool with whether that listener can use it now, and if not why.
import { api } from '../lib/api.js';
import { useLive } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { useEffect, useState } from '../vendor/hooks.js';
import { Loading, Problem } from './common.js';

export function ToolsPage() {
  const listeners = useLive(() => api('/listeners'), []);
  const names = (listeners.data?.listeners ?? []).map((l) => l.name);
  const [as, setAs] = useState('');
  useEffect(() => {
    if (names.length) setAs((current) => current || names[0]);
  }, [names.join()]);
  const tools = useLive(
    () => (as ? api(`/tools?as=${encodeURIComponent(as)}`) : Promise.resolve(undefined)),
    [as],
    {
      when: (e) => e.type === 'lifecycle',
    },
  );
  const rows = tools.data?.tools ?? [];
  const granted = (listeners.data?.listeners ?? []).find((l) => l.name === as)?.tools ?? [];
  return html`<section aria-labelledby="tools-title">
    <h1 id="tools-title">Tools</h1>
    <div class="filters">
      <label>Listener
        <select value=${as} onChange=${(e) => setAs(e.currentTarget.value)}>
          ${names.map((n) => html`<option value=${n}>${n}</option>`)}
        </select></label>
    </div>
    <${Problem} error=${tools.error ?? listeners.error} />
    ${tools.data || tools.error ? null : html`<${Loading} what="Loading tools…" />`}
    <table class="grid" aria-label=${`Tools for ${as}`}>
      <thead><tr><th scope="col">Tool</th><th scope="col">Granted</th><th scope="col">Available</th><th scope="col">Why not</th>
        <th scope="col">Capability</th><th scope="col">Read-only</th><th scope="col">Guard</th><th scope="col">Description</th></tr></thead>
      <tbody>${rows.map(
        (t) => html`<tr data-tool=${t.tool}>
          <th scope="row"><code>${t.tool}</code></th>
          <td>${granted.includes(t.tool) ? 'yes' : 'no'}</td>
          <td>${t.available ? html`<span class="ok-text">yes</span>` : html`<span class="error-text">no</span>`}</td>
          <td>${t.available ? '' : (t.reason ?? '')}</td>
          <td>${t.capability}</td><td>${t.read_only ? 'yes' : 'no'}</td><td>${t.guard ?? ''}</td><td>${t.description}</td>
        </tr>`,
      )}</tbody>
    </table>
  </section>`;
}
