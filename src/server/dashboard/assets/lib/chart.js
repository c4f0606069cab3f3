// Small inline SVG charts: a line over time and horizontal bars. No library, no canvas: they are
// part of the page's text and readable by screen readers through their labels.
import { html } from './html.js';

/** A line of `values` (oldest first) with its latest value printed beside its label. */
export function Sparkline({ label, values, unit = '', digits = 1, width = 320, height = 60 }) {
  const max = Math.max(1e-9, ...values);
  const step = values.length > 1 ? width / (values.length - 1) : width;
  const points = values.map(
    (v, i) => `${(i * step).toFixed(1)},${(height - 4 - (v / max) * (height - 8)).toFixed(1)}`,
  );
  const last = values.length ? values[values.length - 1] : undefined;
  const shown = last === undefined ? '–' : `${last.toFixed(digits)}${unit}`;
  return html`<figure class="chart">
    <figcaption>${label}: <strong>${shown}</strong> <span class="muted">(max ${max.toFixed(digits)}${unit})</span></figcaption>
    <svg viewBox="0 0 ${width} ${height}" width=${width} height=${height} role="img" aria-label=${`${label}, latest ${shown}`}>
      <rect x="0" y="0" width=${width} height=${height} class="chart-bg" />
      ${values.length > 1 ? html`<polyline points=${points.join(' ')} class="chart-line" />` : null}
    </svg>
  </figure>`;
}

/** Horizontal bars: [{label, value, title?}]. */
export function Bars({ label, rows, width = 320 }) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  const rowHeight = 22;
  const height = Math.max(rowHeight, rows.length * rowHeight);
  return html`<figure class="chart">
    <figcaption>${label}</figcaption>
    ${
      rows.length === 0
        ? html`<p class="muted">nothing yet</p>`
        : html`<svg viewBox="0 0 ${width} ${height}" width=${width} height=${height} role="img" aria-label=${label}>
          ${rows.map(
            (r, i) => html`<g>
              <rect x="110" y=${i * rowHeight + 3} height="16" width=${Math.max(1, ((width - 190) * r.value) / max)} class="chart-bar" />
              <text x="0" y=${i * rowHeight + 15} class="chart-text">${r.label}</text>
              <text x=${width - 75} y=${i * rowHeight + 15} class="chart-text">${r.value.toLocaleString()}</text>
            </g>`,
          )}
        </svg>`
    }
  </figure>`;
}
