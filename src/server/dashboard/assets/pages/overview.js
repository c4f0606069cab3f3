// Overview: each listener's queue, what runs, whether it is paused and its recent failures; the
// organism's messages per second and hop latency over the last minutes; LLM tokens by agent.
import { api, metricsText } from '../lib/api.js';
import { Bars, Sparkline } from '../lib/chart.js';
import { clock, field, number, parseMetrics } from '../lib/format.js';
import { useLive } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { useState } from '../vendor/hooks.js';
import { failureText, Loading, Problem } from './common.js';
import { OrganismGraph } from './graph.js';

const REFRESH_MS = 5000;

/** LLM tokens by agent from one /metrics text. */
function tokensByAgent(text) {
  const tokens = {};
  for (const m of parseMetrics(text)) {
    if (m.name !== 'organism_llm_tokens_total') continue;
    const agent = m.labels.listener ?? '?';
    tokens[agent] = (tokens[agent] ?? 0) + m.value;
  }
  return Object.entries(tokens)
    .map(([label, value]) => ({ label, value }))
    .sort((a, b) => b.value - a.value);
}

function ListenerRow({ listener, failures, session, reload }) {
  const state = listener.state ?? { paused: false, depth: 0, active: 0, capacity: 0, concurrency: 0 };
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState();
  const toggle = async () => {
    setBusy(true);
    try {
      await api(`/listeners/${encodeURIComponent(listener.name)}/${state.paused ? 'resume' : 'pause'}`, {
        body: {},
      });
      reload();
      setError(undefined);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const last = failures[0];
  return html`<tr data-listener=${listener.name}>
    <th scope="row"><a href=${`#/listeners/${encodeURIComponent(listener.name)}`}>${listener.name}</a></th>
    <td>${listener.agent ? 'agent' : 'code'}</td>
    <td class="num">${state.depth}</td>
    <td class="num" data-testid="in-flight">${state.active} / ${state.concurrency}</td>
    <td>${state.paused ? html`<span class="paused">paused</span>` : 'running'}</td>
    <td>
      ${failures.length === 0 ? html`<span class="muted">none</span>` : html`<span class="error-text">${failures.length}</span> · ${clock(last.time)} ${failureText(last.payload)}`}
    </td>
    ${
      session.can.pause
        ? html`<td><button type="button" onClick=${toggle} disabled=${busy}
            aria-label=${`${state.paused ? 'Resume' : 'Pause'} ${listener.name}`}>${state.paused ? 'Resume' : 'Pause'}</button>
            ${error ? html`<${Problem} error=${error} />` : null}</td>`
        : null
    }
  </tr>`;
}

export function OverviewPage({ session }) {
  const listeners = useLive(() => api('/listeners'), [], {
    when: (e) => e.type === 'lifecycle' || e.type === 'message',
    everyMs: 3000,
  });
  const failures = useLive(() => api('/messages?kind=failure&limit=200'), [], {
    when: (e) => e.type === 'message' && e.kind === 'failure',
  });
  // The daemon keeps the last minutes (GET /metrics/series), so the charts start full.
  const series = useLive(() => api('/metrics/series'), [], { everyMs: REFRESH_MS });
  const tokens = useLive(async () => tokensByAgent(await metricsText()), [], {
    everyMs: REFRESH_MS,
    when: (e) => e.type === 'message' && e.kind === 'model-turn',
  });
  const points = series.data?.points ?? [];
  const rate = points.map((p) => p.messages_per_second);
  // Percentiles without the time calls waited for a person (the daemon takes it out).
  const p50 = points.filter((p) => p.hop_p50_ms != null).map((p) => p.hop_p50_ms);
  const p95 = points.filter((p) => p.hop_p95_ms != null).map((p) => p.hop_p95_ms);
  const minutes = Math.round(((series.data?.interval_ms ?? REFRESH_MS) * points.length) / 60000);
  const byListener = {};
  for (const f of failures.data?.messages ?? []) {
    const name = field(f.payload, 'listener') ?? f.from;
    byListener[name] ??= [];
    byListener[name].push(f);
  }
  return html`<section aria-labelledby="overview-title">
    <h1 id="overview-title">Overview</h1>
    ${
      listeners.data
        ? html`<${OrganismGraph} listeners=${listeners.data.listeners}
            failures=${Object.fromEntries(Object.entries(byListener).map(([k, v]) => [k, v.length]))} />`
        : null
    }
    <div class="charts">
      <${Sparkline} label="Messages per second" values=${rate} digits=${1} />
      <${Sparkline} label="Hop latency p50" values=${p50} unit=" ms" digits=${1} />
      <${Sparkline} label="Hop latency p95" values=${p95} unit=" ms" digits=${1} />
      <${Bars} label="LLM tokens by agent (input + output)" rows=${tokens.data ?? []} />
    </div>
    <p class="muted">Hop latency leaves out time spent waiting for a person's approval. The last ${minutes < 1 ? 'minute' : `${minutes} min`}, one point every ${(series.data?.interval_ms ?? REFRESH_MS) / 1000} s.</p>
    <${Problem} error=${series.error ?? tokens.error} />
    <h2>Listeners</h2>
    <${Problem} error=${listeners.error} />
    ${listeners.data || listeners.error ? null : html`<${Loading} what="Loading listeners…" />`}
    <table class="grid">
      <thead><tr>
        <th scope="col">Listener</th><th scope="col">Kind</th><th scope="col" class="num">Queue depth</th>
        <th scope="col" class="num" title="handlers running / max_concurrent">In flight / concurrency</th><th scope="col">State</th><th scope="col">Recent failures</th>
        ${session.can.pause ? html`<th scope="col">Action</th>` : null}
      </tr></thead>
      <tbody>
        ${(listeners.data?.listeners ?? []).map(
          (l) =>
            html`<${ListenerRow} key=${l.name} listener=${l} failures=${byListener[l.name] ?? []} session=${session} reload=${listeners.reload} />`,
        )}
      </tbody>
    </table>
    ${listeners.data ? html`<p class="muted">${listeners.data.listeners.length} listeners, ${number(rate.length ? rate[rate.length - 1] : 0, 1)} messages per second now.</p>` : null}
  </section>`;
}
