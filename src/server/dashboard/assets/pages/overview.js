// Overview: each listener's queue, what runs, whether it is paused and its recent failures; the
// organism's messages per second and hop latency over the last minutes; LLM tokens by agent.
import { api, metricsText } from '../lib/api.js';
import { Bars, Sparkline } from '../lib/chart.js';
import { clock, field, number, parseMetrics } from '../lib/format.js';
import { useLive } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { useEffect, useState } from '../vendor/hooks.js';
import { failureText, Problem } from './common.js';

const SAMPLE_MS = 2000;
const KEEP = 150; // five minutes of samples

/** Totals read from one /metrics text. */
function totals(text) {
  const t = { messages: 0, hopSum: 0, hopCount: 0, tokens: {} };
  for (const m of parseMetrics(text)) {
    if (m.name === 'organism_messages_total') t.messages += m.value;
    else if (m.name === 'organism_hop_latency_seconds_sum') t.hopSum += m.value;
    else if (m.name === 'organism_hop_latency_seconds_count') t.hopCount += m.value;
    else if (m.name === 'organism_llm_tokens_total') {
      const agent = m.labels.listener ?? '?';
      t.tokens[agent] ??= { input: 0, output: 0 };
      t.tokens[agent][m.labels.direction === 'output' ? 'output' : 'input'] += m.value;
    }
  }
  return t;
}

// Kept across visits to the page, so coming back shows the minutes already sampled.
const samples = [];

function useSeries() {
  const [, setVersion] = useState(0);
  const [error, setError] = useState();
  useEffect(() => {
    let stopped = false;
    const sample = async () => {
      try {
        const t = totals(await metricsText());
        samples.push({ at: Date.now(), ...t });
        if (samples.length > KEEP) samples.splice(0, samples.length - KEEP);
        if (!stopped) {
          setError(undefined);
          setVersion((v) => v + 1);
        }
      } catch (e) {
        if (!stopped) setError(e);
      }
    };
    sample();
    const timer = setInterval(sample, SAMPLE_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);
  const rate = [];
  const latency = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1];
    const b = samples[i];
    const dt = (b.at - a.at) / 1000;
    rate.push(dt > 0 ? Math.max(0, b.messages - a.messages) / dt : 0);
    const n = b.hopCount - a.hopCount;
    // An interval with no hop has no latency (not a latency of 0).
    if (n > 0) latency.push(((b.hopSum - a.hopSum) / n) * 1000);
  }
  return { rate, latency, last: samples[samples.length - 1], error };
}

function ListenerRow({ listener, failures, session, reload }) {
  const state = listener.state ?? { paused: false, depth: 0, active: 0, capacity: 0 };
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
    <th scope="row">${listener.name}</th>
    <td>${listener.agent ? 'agent' : 'code'}</td>
    <td class="num">${state.depth}</td>
    <td class="num">${state.active} / ${state.capacity}</td>
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
  const series = useSeries();
  const byListener = {};
  for (const f of failures.data?.messages ?? []) {
    const name = field(f.payload, 'listener') ?? f.from;
    byListener[name] ??= [];
    byListener[name].push(f);
  }
  const tokens = Object.entries(series.last?.tokens ?? {})
    .map(([agent, t]) => ({ label: agent, value: t.input + t.output }))
    .sort((a, b) => b.value - a.value);
  return html`<section aria-labelledby="overview-title">
    <h1 id="overview-title">Overview</h1>
    <div class="charts">
      <${Sparkline} label="Messages per second" values=${series.rate} digits=${1} />
      <${Sparkline} label="Hop latency (mean)" values=${series.latency} unit=" ms" digits=${1} />
      <${Bars} label="LLM tokens by agent (input + output)" rows=${tokens} />
    </div>
    <p class="muted">Sampled from /metrics every ${SAMPLE_MS / 1000} s while this page is open (up to five minutes).</p>
    <${Problem} error=${series.error} />
    <h2>Listeners</h2>
    <${Problem} error=${listeners.error} />
    <table class="grid">
      <thead><tr>
        <th scope="col">Listener</th><th scope="col">Kind</th><th scope="col" class="num">Queue depth</th>
        <th scope="col" class="num">In flight / capacity</th><th scope="col">State</th><th scope="col">Recent failures</th>
        ${session.can.pause ? html`<th scope="col">Action</th>` : null}
      </tr></thead>
      <tbody>
        ${(listeners.data?.listeners ?? []).map(
          (l) =>
            html`<${ListenerRow} key=${l.name} listener=${l} failures=${byListener[l.name] ?? []} session=${session} reload=${listeners.reload} />`,
        )}
      </tbody>
    </table>
    ${listeners.data ? html`<p class="muted">${listeners.data.listeners.length} listeners, ${number(series.last?.messages)} messages delivered since start.</p>` : null}
  </section>`;
}
