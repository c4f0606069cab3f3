// Dead letters: messages the bus gave up on after bus.max_deliveries (redis transport).
import { api } from '../lib/api.js';
import { clock } from '../lib/format.js';
import { useLive } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { Loading, Problem, ThreadLink } from './common.js';

export function DeadLettersPage() {
  const page = useLive(() => api('/dead-letters?limit=200'), [], { everyMs: 10_000 });
  const rows = page.data?.dead_letters ?? [];
  return html`<section aria-labelledby="dead-title">
    <h1 id="dead-title">Dead letters</h1>
    <${Problem} error=${page.error} />
    ${page.data || page.error ? null : html`<${Loading} what="Loading dead letters…" />`}
    ${page.data ? html`<p class="muted">${page.data.total} messages dead-lettered in all.</p>` : null}
    ${
      rows.length === 0
        ? html`<p>No dead letters.</p>`
        : html`<table class="grid" aria-label="Dead letters">
          <thead><tr><th scope="col">Time</th><th scope="col">Listener</th><th scope="col">From</th><th scope="col">Tag</th>
            <th scope="col">Deliveries</th><th scope="col">Reason</th><th scope="col">Thread</th></tr></thead>
          <tbody>${rows.map(
            (
              d,
            ) => html`<tr><td>${clock(d.time)}</td><td>${d.listener}</td><td>${d.from ?? ''}</td><td>${d.tag ?? ''}</td>
              <td class="num">${d.deliveries}</td><td>${d.reason}</td><td><${ThreadLink} id=${d.thread} /></td></tr>`,
          )}</tbody>
        </table>`
    }
  </section>`;
}
