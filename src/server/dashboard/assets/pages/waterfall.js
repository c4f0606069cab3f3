// The thread view's waterfall: one bar per hop, model turn, tool call and approval wait on a time
// axis, nested by what caused what; it grows while the thread runs. A bar opens its message below.
import { prettyXml } from '../lib/format.js';
import { useTick } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { waterfallBars } from '../lib/waterfall.js';
import { useState } from '../vendor/hooks.js';

/** Records above which the waterfall waits for a click. */
const LONG = 300;

function ms(n) {
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 10_000 ? 0 : 1)} s` : `${Math.round(n)} ms`;
}

/** Position through the CSSOM: the page's policy refuses style attributes, not style properties. */
function place(el, left, width) {
  if (!el) return;
  el.style.marginLeft = `${left}%`;
  el.style.width = `${width}%`;
}

export function Waterfall({ messages, running }) {
  useTick(running ? 1000 : 3_600_000);
  const [selected, setSelected] = useState();
  const [shown, setShown] = useState(false);
  if (messages.length === 0) return null;
  // A long thread's bars are laid out only when asked for: the message list comes first.
  if (messages.length > LONG && !shown)
    return html`<section class="waterfall" aria-labelledby="waterfall-title">
      <h2 id="waterfall-title">Waterfall</h2>
      <button type="button" onClick=${() => setShown(true)}>Show the waterfall of ${messages.length} records</button>
    </section>`;
  const bars = waterfallBars(messages);
  const start = Math.min(...bars.map((b) => b.start));
  const end = Math.max(...bars.map((b) => b.end), start + 1);
  const span = end - start;
  const chosen = bars.find((b) => b.id === selected);
  return html`<section class="waterfall" aria-labelledby="waterfall-title">
    <h2 id="waterfall-title">Waterfall</h2>
    <p class="muted">${bars.length} steps over ${ms(span)}; a bar opens its message.</p>
    <ol class="bars" aria-label="Steps in time">
      ${bars.map((b) => {
        const left = ((b.start - start) / span) * 100;
        const width = Math.max(0.4, ((b.end - b.start) / span) * 100);
        return html`<li key=${b.id} class=${`bar-row d-${b.depth}`} data-bar=${b.kind} data-id=${b.id}>
          <span class="bar-name">${b.label}</span>
          <span class="bar-track">
            <button type="button" class=${`bar b-${b.kind}${b.open ? ' open' : ''}`} aria-pressed=${selected === b.id}
              data-left=${left.toFixed(2)} data-width=${width.toFixed(2)} onClick=${() => setSelected(selected === b.id ? undefined : b.id)}
              aria-label=${`${b.label}, ${ms(b.end - b.start)}: show the message`}
              ref=${(el) => place(el, left, width)}></button>
          </span>
          <span class="bar-duration" data-testid="duration">${ms(b.end - b.start)}${b.open ? '…' : ''}</span>
        </li>`;
      })}
    </ol>
    ${
      chosen
        ? html`<div class="bar-message" data-testid="waterfall-message">
            <h3>${chosen.message.kind} ${chosen.message.from} → ${chosen.message.to}</h3>
            <pre class="xml">${prettyXml(chosen.message.payload)}</pre>
          </div>`
        : null
    }
  </section>`;
}
