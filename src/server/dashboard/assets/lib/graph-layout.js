// The organism as a graph: listeners (code, agent), the peers they may send to, their tools and the
// MCP servers their `server.tool` grants come from; laid out by dagre (left to right, labels of
// edges placed as nodes of their own, so no label sits on another).
import dagre from '../vendor/dagre.js';

/** Width of one character of a label (12px system-ui, rounded up so the text fits its box). */
const CHAR_PX = 7.4;
const PAD_PX = 20;
export const EDGE_LABEL = { width: 50, height: 16 };

/** Nodes and edges of the organism from GET /listeners. */
export function organismGraph(listeners) {
  const nodes = new Map();
  const edges = new Map();
  const names = new Set(listeners.map((l) => l.name));
  for (const l of listeners) {
    nodes.set(`l:${l.name}`, {
      id: `l:${l.name}`,
      kind: l.agent ? 'agent' : 'code',
      name: l.name,
      listener: l,
    });
  }
  const edge = (from, to, kind, target) => {
    const id = `${from}->${to}`;
    const known = edges.get(id);
    if (known) known.targets.push(target);
    else edges.set(id, { id, from, to, kind, source: from.slice(2), targets: [target] });
  };
  for (const l of listeners) {
    for (const peer of l.peers ?? []) if (names.has(peer)) edge(`l:${l.name}`, `l:${peer}`, 'peer', peer);
    for (const tool of l.tools ?? []) {
      // `server.tool` is a tool of MCP server `server` (mcp_servers:); one node per server.
      const dot = tool.indexOf('.');
      const id = dot > 0 ? `m:${tool.slice(0, dot)}` : `t:${tool}`;
      if (!nodes.has(id))
        nodes.set(id, { id, kind: dot > 0 ? 'mcp' : 'tool', name: dot > 0 ? tool.slice(0, dot) : tool });
      edge(`l:${l.name}`, id, dot > 0 ? 'mcp' : 'tool', tool);
    }
  }
  return { nodes: [...nodes.values()], edges: [...edges.values()] };
}

/** The lines a node shows (its name first). */
export function nodeLines(node, facts = {}) {
  if (node.kind === 'tool') return [node.name];
  if (node.kind === 'mcp') return [node.name, 'MCP server'];
  const state = node.listener.state;
  const second = [`${node.kind}`, `queue ${state?.depth ?? 0}`];
  if (facts.failures) second.push(`${facts.failures} failed`);
  if (state?.paused) second.push('paused');
  return [node.name, second.join(' · ')];
}

/** Positions: {nodes: [{...node, x, y, width, height}], edges: [{...edge, points, label: {x, y}}], width, height}. */
export function layOut(graph, facts = {}) {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 16, ranksep: 56, edgesep: 12, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) {
    const lines = nodeLines(n, facts[n.name]);
    const width = Math.ceil(Math.max(...lines.map((l) => l.length)) * CHAR_PX + PAD_PX);
    g.setNode(n.id, { width, height: lines.length > 1 ? 40 : 24 });
  }
  for (const e of graph.edges) g.setEdge(e.from, e.to, { ...EDGE_LABEL, labelpos: 'c' });
  dagre.layout(g);
  const { width, height } = g.graph();
  return {
    width: Math.ceil(width),
    height: Math.ceil(height),
    nodes: graph.nodes.map((n) => ({ ...n, ...g.node(n.id), lines: nodeLines(n, facts[n.name]) })),
    edges: graph.edges.map((e) => {
      const laid = g.edge(e.from, e.to);
      return { ...e, points: laid.points, label: { x: laid.x, y: laid.y } };
    }),
  };
}
