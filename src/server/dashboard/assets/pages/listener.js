// One listener (#/listeners/<name>, opened from the graph): what it is, its queue, the tools it is
// granted with their tool_config, its configuration as organism.yaml has it, its recent threads.
import { api } from '../lib/api.js';
import { age } from '../lib/format.js';
import { useLive } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { Json, Loading, Problem, ThreadLink, ThreadState, threadState } from './common.js';

export function ListenerPage({ arg: name }) {
  const info = useLive(() => api(`/listeners/${encodeURIComponent(name)}`), [name], {
    when: (e) => e.type === 'lifecycle' || (e.type === 'message' && e.message?.to === name),
    everyMs: 5000,
  });
  const config = useLive(() => api('/organism/config'), []);
  const threads = useLive(() => api(`/threads?limit=20&listener=${encodeURIComponent(name)}`), [name], {
    when: (e) => e.type === 'message' && (e.message?.to === name || e.message?.from === name),
  });
  const failures = useLive(() => api('/messages?kind=failure&limit=1000'), [], {
    when: (e) => e.type === 'message' && e.kind === 'failure',
  });
  const failed = new Set((failures.data?.messages ?? []).map((m) => m.thread));
  const l = info.data;
  const entry = (config.data?.listeners ?? []).find((c) => c.name === name);
  const toolConfig = entry?.tool_config ?? {};
  const state = l?.state;
  return html`<section aria-labelledby="listener-title">
    <p><a href="#/overview">← Overview</a></p>
    <h1 id="listener-title">Listener <code>${name}</code></h1>
    <${Problem} error=${info.error} />
    ${
      l
        ? html`<dl class="facts" data-testid="listener-facts">
            <dt>kind</dt><dd>${l.agent ? 'agent' : 'code'}</dd>
            <dt>description</dt><dd>${l.description}</dd>
            <dt>payload</dt><dd><code>&lt;${l.tag}&gt;</code></dd>
            <dt>peers</dt><dd>${l.peers.length ? l.peers.map((p) => html`<a href=${`#/listeners/${encodeURIComponent(p)}`}>${p}</a> `) : 'none'}</dd>
            ${state ? html`<dt>queue</dt><dd>${state.depth} waiting of ${state.capacity}; ${state.active} of ${state.concurrency} running${state.paused ? '; paused' : ''}</dd>` : null}
          </dl>
          <h2>Granted tools</h2>
          ${
            l.tools.length
              ? html`<table class="grid" aria-label="Granted tools"><thead><tr><th scope="col">Tool</th><th scope="col">tool_config</th></tr></thead>
                <tbody>${l.tools.map((t) => html`<tr data-grant=${t}><td><code>${t}</code></td><td>${toolConfig[t] ? html`<${Json} value=${toolConfig[t]} />` : html`<span class="muted">defaults</span>`}</td></tr>`)}</tbody></table>`
              : html`<p class="muted">No tools granted.</p>`
          }
          <h2>Configuration</h2>
          ${entry ? html`<${Json} value=${entry} fold=${2000} />` : config.error ? html`<${Problem} error=${config.error} />` : html`<${Loading} what="Loading the configuration…" />`}
          <h2>Recent threads</h2>
          ${
            threads.data
              ? html`<table class="grid" aria-label="Recent threads"><thead><tr><th scope="col">Thread</th><th scope="col">Status</th><th scope="col">Messages</th><th scope="col">Last activity</th></tr></thead>
                <tbody>${threads.data.threads.map((t) => html`<tr data-thread=${t.thread}><td><${ThreadLink} id=${t.thread} /></td><td><${ThreadState} state=${threadState(t.status, { failed: failed.has(t.thread) })} /></td><td class="num">${t.messages}</td><td>${age(t.updated)} ago</td></tr>`)}</tbody></table>`
              : html`<${Loading} what="Loading threads…" />`
          }`
        : info.error
          ? null
          : html`<${Loading} what="Loading the listener…" />`
    }
  </section>`;
}
