// The dashboard's entry: sign in, then the pages behind a hash router (#/threads/<id>...). The
// route holds thread ids and filters, never the token: a signed-in link's #token=... is taken
// into the tab's storage before the router reads the address, and removed from it.
import { api, closeStream, onEvent, onStreamState, openStream, token } from './lib/api.js';
import { html } from './lib/html.js';
import { ApprovalsPage } from './pages/approvals.js';
import { AuditPage } from './pages/audit.js';
import { DeadLettersPage } from './pages/dead-letters.js';
import { ListenerPage } from './pages/listener.js';
import { OverviewPage } from './pages/overview.js';
import { ThreadPage } from './pages/thread.js';
import { ThreadsPage } from './pages/threads.js';
import { ToolsPage } from './pages/tools.js';
import { useEffect, useState } from './vendor/hooks.js';
import { render } from './vendor/preact.js';

const PAGES = [
  { path: 'overview', title: 'Overview', page: OverviewPage },
  { path: 'threads', title: 'Threads', page: ThreadsPage },
  { path: 'approvals', title: 'Approvals', page: ApprovalsPage },
  { path: 'audit', title: 'Audit', page: AuditPage },
  { path: 'dead-letters', title: 'Dead letters', page: DeadLettersPage },
  { path: 'tools', title: 'Tools', page: ToolsPage },
];

// `organism dashboard` (and the daemon on a terminal) prints /#token=<token>: the fragment never
// reaches the server, and replaceState drops it from the address bar and this history entry.
if (location.hash.startsWith('#token=')) {
  try {
    const value = decodeURIComponent(location.hash.slice('#token='.length));
    if (value) token.set(value);
  } catch {
    // Mangled: the sign-in form asks instead.
  }
  history.replaceState(null, '', `${location.pathname}${location.search}#/overview`);
}

function parseRoute() {
  const [path = 'overview', ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  return { path: path || 'overview', arg: rest.length ? decodeURIComponent(rest.join('/')) : undefined };
}

function useRoute() {
  const [route, setRoute] = useState(parseRoute());
  useEffect(() => {
    const changed = () => setRoute(parseRoute());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

function SignIn({ onSession, problem }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState(problem);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    token.set(value.trim());
    try {
      onSession(await api('/session'));
    } catch (err) {
      token.clear();
      setError(err.status === 401 ? 'That token is not valid here.' : err.message);
    } finally {
      setBusy(false);
    }
  };
  return html`<main class="signin">
    <h1>Organism</h1>
    <form onSubmit=${submit} method="post" action="#">
      <label for="token">API token</label>
      <input id="token" name="token" type="password" autocomplete="current-password" required value=${value}
        onInput=${(e) => setValue(e.currentTarget.value)} />
      <button type="submit" disabled=${busy}>Sign in</button>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <p class="muted">The token stays in this browser tab (session storage) and is sent only to this daemon.
        On the daemon's machine, <code>npx organism dashboard</code> prints a link that signs in.</p>
    </form>
  </main>`;
}

function Nav({ route, pending }) {
  return html`<nav aria-label="Pages"><ul>
    ${PAGES.map(
      (p) => html`<li><a href=${`#/${p.path}`} aria-current=${route.path === p.path ? 'page' : undefined}>
        ${p.title}${p.path === 'approvals' && pending > 0 ? html` <span class="badge" aria-label=${`${pending} pending`}>${pending}</span>` : null}
      </a></li>`,
    )}
  </ul></nav>`;
}

function usePendingApprovals() {
  const [count, setCount] = useState(0);
  useEffect(() => {
    const load = () =>
      api('/approvals').then(
        (r) => setCount(r.approvals.length),
        () => {},
      );
    load();
    return onEvent((e) => e.type === 'approval' && load());
  }, []);
  return count;
}

function Shell({ session, onSignOut }) {
  const route = useRoute();
  const pending = usePendingApprovals();
  // undefined until the stream first answers: "connecting", not "offline", while the page loads.
  const [live, setLive] = useState(undefined);
  useEffect(() => onStreamState(setLive), []);
  const listener = route.path === 'listeners' && route.arg;
  const entry = PAGES.find((p) => p.path === (listener ? 'overview' : route.path)) ?? PAGES[0];
  const Page = route.path === 'threads' && route.arg ? ThreadPage : listener ? ListenerPage : entry.page;
  useEffect(() => {
    document.title = `${entry.title} · ${session.organism} · Organism`;
  }, [entry, session]);
  return html`<div class="shell">
    <header>
      <a class="brand" href="#/overview">${session.organism}</a>
      <${Nav} route=${route} pending=${pending} />
      <div class="who">
        <span class=${live ? 'live on' : 'live'} data-testid="stream-state"
          title=${live ? 'live stream connected' : live === undefined ? 'live stream connecting' : 'live stream not connected'}>${live ? 'live' : live === undefined ? 'connecting…' : 'offline'}</span>
        <span data-testid="who">${session.name} (${session.role})</span>
        ${session.auth ? html`<button type="button" class="link" onClick=${onSignOut}>Sign out</button>` : null}
      </div>
    </header>
    <main id="main">
      <${Page} session=${session} arg=${route.arg} />
    </main>
  </div>`;
}

function App() {
  const [session, setSession] = useState(undefined);
  const [problem, setProblem] = useState(undefined);
  useEffect(() => {
    // With a token from earlier in this tab, or with no auth configured, no sign-in is needed.
    api('/session').then(setSession, (err) => {
      token.clear();
      if (err.status !== 401) setProblem(err.message);
      setSession(null);
    });
  }, []);
  useEffect(() => {
    if (!session) return;
    openStream();
    const expired = () => {
      token.clear();
      setProblem('The token is no longer accepted; sign in again.');
      setSession(null);
    };
    addEventListener('organism:signed-out', expired);
    return () => {
      removeEventListener('organism:signed-out', expired);
      closeStream();
    };
  }, [session]);
  if (session === undefined) return html`<p class="loading">Loading…</p>`;
  if (session === null) return html`<${SignIn} onSession=${setSession} problem=${problem} />`;
  const signOut = () => {
    token.clear();
    setSession(null);
  };
  return html`<${Shell} session=${session} onSignOut=${signOut} />`;
}

render(html`<${App} />`, document.getElementById('app'));
