/**
 * How long the thread view takes to open a long thread, measured in the page: from the moment the
 * route changes (the page then fetches the thread) to the moment its last entry is in the document
 * (`dom`), and to the first frame drawn after that with the last entry laid out (`drawn`, what
 * the report calls the render time). `fetch` is the daemon's answer to the thread's GET, part of
 * both. The page is left on the thread view.
 */
import type { Page } from 'playwright-core';

export interface ThreadTiming {
  dom: number;
  drawn: number;
  fetch: number;
}

export async function timeThreadView(page: Page, thread: string, entries: number): Promise<ThreadTiming> {
  return page.evaluate(
    ({ id, entries }) =>
      new Promise<ThreadTiming>((resolve) => {
        const start = performance.now();
        const fetchTime = () => {
          const mine = performance
            .getEntriesByType('resource')
            .filter((e) => e.name.endsWith(`/api/v1/threads/${id}`)) as PerformanceResourceTiming[];
          const last = mine[mine.length - 1];
          return last && last.startTime >= start ? last.responseEnd - last.startTime : Number.NaN;
        };
        // A MutationObserver sees the entries as soon as they are inserted (polling would add up
        // to a frame of its own to the figure).
        const observer = new MutationObserver(() => {
          const items = document.querySelectorAll('ol.timeline > li');
          if (items.length < entries) return;
          observer.disconnect();
          const dom = performance.now() - start;
          // Layout up to the last entry, then the frame that shows it: rAF runs before that frame
          // is drawn, a task queued from it after.
          items[items.length - 1]!.getBoundingClientRect();
          requestAnimationFrame(() =>
            setTimeout(() => resolve({ dom, drawn: performance.now() - start, fetch: fetchTime() })),
          );
        });
        observer.observe(document.body, { childList: true, subtree: true });
        location.hash = `#/threads/${id}`;
      }),
    { id: thread, entries },
  );
}

/** The median of some figures (the middle one, or the mean of the two in the middle). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
