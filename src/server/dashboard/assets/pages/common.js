// Pieces several pages use: error and empty states, a payload viewer, the role check.
import { field, prettyXml } from '../lib/format.js';
import { html } from '../lib/html.js';
import { useState } from '../vendor/hooks.js';

export function Problem({ error }) {
  if (!error) return null;
  return html`<p class="error" role="alert">${error.code ? `${error.code}: ` : ''}${error.message}</p>`;
}

/**
 * XML payload, indented; folded behind a summary when longer than `fold` lines (`fold` 0: always
 * folded, and then indented only once opened). A function, not a component: a short payload is a
 * plain <pre> with no state of its own, and a long thread has a thousand of them.
 */
export function payload(xml, { fold = 12, label = 'payload' } = {}) {
  if (fold === 0) return html`<${Folded} xml=${xml} summary=${`${label} (${xml.length} characters)`} />`;
  const text = prettyXml(xml);
  const lines = text.split('\n').length;
  if (lines <= fold) return html`<pre class="xml">${text}</pre>`;
  return html`<${Folded} xml=${xml} text=${text} summary=${`${label} (${lines} lines)`} />`;
}

/** A folded payload: its text laid out only once opened. */
function Folded({ xml, text, summary }) {
  const [open, setOpen] = useState(false);
  return html`<details class="fold" onToggle=${(e) => setOpen(e.currentTarget.open)}>
    <summary>${summary}</summary>${open ? html`<pre class="xml">${text ?? prettyXml(xml)}</pre>` : null}
  </details>`;
}

/** A short JSON text of a value, folded when long. */
export function Json({ value, fold = 400 }) {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  if (text === undefined) return null;
  if (text.length <= fold) return html`<pre class="json">${text}</pre>`;
  return html`<details class="fold"><summary>${text.length.toLocaleString()} characters</summary><pre class="json">${text}</pre></details>`;
}

export function Verdict({ value }) {
  const v = value ?? 'none';
  return html`<span class=${`verdict v-${v}`}>${v}</span>`;
}

/** The listener's failure record's cause, in one line. */
export function failureText(xml) {
  return `${field(xml, 'error') ?? 'Error'}: ${field(xml, 'message') ?? ''}${field(xml, 'at') ? ` (at ${field(xml, 'at')})` : ''}`;
}

export function ThreadLink({ id }) {
  if (!id) return html`<span class="muted">–</span>`;
  return html`<a class="mono" href=${`#/threads/${encodeURIComponent(id)}`} title=${id}>${id.slice(0, 8)}</a>`;
}

/** A page's first answer has not come yet (not an error, not empty). */
export function Loading({ what = 'Loading…' }) {
  return html`<p class="loading" role="status" data-testid="loading">${what}</p>`;
}

/**
 * What a person asks of a thread, from the bus's status (active / idle / stopped) and its records:
 * stopped (killed or out of budget), waiting for approval, running, failed (a handler's failure
 * record and nothing left to run) or done.
 */
export function threadState(status, { failed = false, waiting = false } = {}) {
  if (status === 'stopped') return 'stopped';
  if (waiting) return 'waiting for approval';
  if (status === 'active') return 'running';
  return failed ? 'failed' : 'done';
}

export function ThreadState({ state, testid }) {
  return html`<span class=${`status s-${state.replaceAll(' ', '-')}`} data-testid=${testid}>${state}</span>`;
}
