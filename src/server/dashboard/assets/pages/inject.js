// Inject a payload (operator): pick a listener, its example from `describe` is filled in.
import { api } from '../lib/api.js';
import { html } from '../lib/html.js';
import { useEffect, useState } from '../vendor/hooks.js';
import { Problem } from './common.js';

export function InjectForm({ listeners }) {
  const [to, setTo] = useState('');
  const [payload, setPayload] = useState('');
  const [error, setError] = useState();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    // Functional: a choice the user made before this effect ran is kept, not overwritten.
    if (listeners.length > 0) setTo((current) => current || listeners[0].name);
  }, [listeners]);
  useEffect(() => {
    if (!to) return;
    let current = true;
    api(`/listeners/${encodeURIComponent(to)}/example`).then(
      (r) => current && setPayload(r.example),
      (e) => current && setError(e),
    );
    return () => {
      current = false;
    };
  }, [to]);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    try {
      const r = await api('/inject', { body: { to, payload } });
      setError(undefined);
      location.hash = `#/threads/${encodeURIComponent(r.thread)}`;
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="inject" onSubmit=${submit} method="post" aria-labelledby="inject-title">
    <h2 id="inject-title">Inject a message</h2>
    <label for="inject-to">To</label>
    <select id="inject-to" value=${to} onChange=${(e) => setTo(e.currentTarget.value)}>
      ${listeners.map((l) => html`<option value=${l.name}>${l.name}</option>`)}
    </select>
    <label for="inject-payload">Payload (XML)</label>
    <textarea id="inject-payload" rows="6" spellcheck="false" value=${payload}
      onInput=${(e) => setPayload(e.currentTarget.value)}></textarea>
    <button type="submit" disabled=${busy || !to}>Inject</button>
    <${Problem} error=${error} />
  </form>`;
}
