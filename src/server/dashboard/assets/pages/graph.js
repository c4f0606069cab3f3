// The overview's picture of the organism: who may talk to whom, with the live rate on each edge
// (messages or tool calls per second over the last 10 s), queue depth and failures on each
// listener, paused ones marked. A listener opens its page (#/listeners/<name>); `route` (a thread's
// path, [from, to] pairs) is drawn over the edges it took.
import { EDGE_LABEL, layOut, organismGraph } from '../lib/graph-layout.js';
import { useTick } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { rate } from '../lib/rates.js';
import { useMemo } from '../vendor/hooks.js';

function path(points) {
  return points.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
}

function edgeRate(e) {
  // An MCP server's edge carries the calls of every tool of it the listener holds.
  return e.targets.reduce((sum, t) => sum + rate(e.source, t), 0);
}

function Node({ n }) {
  const paused = n.listener?.state?.paused;
  const box = html`<rect x=${n.x - n.width / 2} y=${n.y - n.height / 2} width=${n.width} height=${n.height} rx="4" />
    ${n.lines.map(
      (line, i) =>
        html`<text class=${i ? 'node-sub' : 'node-label'} x=${n.x} y=${n.y + (i - (n.lines.length - 1) / 2) * 15 + 4}
          text-anchor="middle">${line}</text>`,
    )}`;
  const cls = `node n-${n.kind}${paused ? ' paused' : ''}`;
  if (!n.listener) return html`<g class=${cls} data-node=${n.id}>${box}</g>`;
  return html`<a class=${cls} data-node=${n.id} href=${`#/listeners/${encodeURIComponent(n.name)}`}>${box}</a>`;
}

export function OrganismGraph({ listeners, failures = {}, route }) {
  useTick(1000);
  const facts = {};
  for (const [name, count] of Object.entries(failures)) facts[name] = { failures: count };
  const key =
    JSON.stringify(
      listeners.map((l) => [l.name, l.agent, l.peers, l.tools, l.state?.depth, l.state?.paused]),
    ) + JSON.stringify(facts);
  const laid = useMemo(() => layOut(organismGraph(listeners), facts), [key]);
  const taken = new Set((route ?? []).map(([from, to]) => `${from}->${to}`));
  const edges = laid.edges.map((e) => ({
    ...e,
    key: `${e.source}->${e.to.slice(2)}`,
    rate: edgeRate(e),
    on: e.targets.some((t) => taken.has(`${e.source}->${t}`)),
  }));
  return html`<figure class="graph">
    <figcaption>The organism: listeners, their peers and tools; edges show messages or calls per second (last 10 s).</figcaption>
    <div class="graph-scroll">
      <svg role="group" aria-label="Organism graph" width=${laid.width} height=${laid.height}
        viewBox=${`0 0 ${laid.width} ${laid.height}`} data-testid="organism-graph">
        <defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
          <path d="M0,0 L10,5 L0,10 z" /></marker></defs>
        ${edges.map(
          (
            e,
          ) => html`<g class=${`edge e-${e.kind}${e.rate > 0 ? ' flowing' : ''}${e.on ? ' on-route' : ''}`} data-edge=${e.key}>
            <path d=${path(e.points)} marker-end="url(#arrow)" />
          </g>`,
        )}
        ${edges.map(
          // Labels after every line, so no line crosses a rate.
          (e) => html`<g class="edge-tag" data-edge-label=${e.key}>
            <rect class="edge-box" x=${e.label.x - EDGE_LABEL.width / 2} y=${e.label.y - EDGE_LABEL.height / 2}
              width=${EDGE_LABEL.width} height=${EDGE_LABEL.height} rx="3" />
            <text class="edge-label" x=${e.label.x} y=${e.label.y + 4} text-anchor="middle">${e.rate.toFixed(1)}/s</text>
          </g>`,
        )}
        ${laid.nodes.map((n) => html`<${Node} key=${n.id} n=${n} />`)}
      </svg>
    </div>
  </figure>`;
}
