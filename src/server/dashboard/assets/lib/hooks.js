// Data loading for pages: fetch, then fetch again when a matching stream event arrives (at most
// every 250 ms, so a burst of events costs one request) or every `everyMs`.
import { useCallback, useEffect, useRef, useState } from '../vendor/hooks.js';
import { onEvent } from './api.js';

/**
 * `{data, error, reload}` of `load()`; `deps` restart it; `when(event)` says which stream events
 * make it stale.
 */
export function useLive(load, deps, { when, everyMs } = {}) {
  const [state, setState] = useState({ data: undefined, error: undefined });
  const seq = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const data = await load();
      if (mine === seq.current) setState({ data, error: undefined });
    } catch (error) {
      if (mine === seq.current) setState((s) => ({ data: s.data, error }));
    }
  }, deps);
  useEffect(() => {
    setState({ data: undefined, error: undefined });
    reload();
    // Throttled, not debounced: under a steady stream of events the page still refreshes
    // every 250 ms instead of waiting for a quiet moment that may never come.
    let timer;
    const stale = () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        reload();
      }, 250);
    };
    const off = when ? onEvent((e) => when(e) && stale()) : () => {};
    const every = everyMs ? setInterval(reload, everyMs) : undefined;
    return () => {
      off();
      clearTimeout(timer);
      clearInterval(every);
      seq.current++;
    };
  }, [reload]);
  return { ...state, reload };
}

/** Re-renders every `ms` (relative ages). */
export function useTick(ms) {
  const [, set] = useState(0);
  useEffect(() => {
    const t = setInterval(() => set((n) => n + 1), ms);
    return () => clearInterval(t);
  }, [ms]);
}
