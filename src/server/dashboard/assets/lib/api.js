// The dashboard's one way to the daemon: /api/v1 with the signed-in token as a bearer header, and
// the live stream with the token as a WebSocket subprotocol. The token lives in this tab's
// sessionStorage only: never in a request URL, a cookie or a log (a sign-in link's fragment is
// read once and removed, see app.js).

const KEY = 'organism.dashboard.token';

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (value) => sessionStorage.setItem(KEY, value),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function headers(extra = {}) {
  const out = { accept: 'application/json', ...extra };
  const t = token.get();
  if (t) out.authorization = `Bearer ${t}`;
  return out;
}

/** GET (or POST with `body`) /api/v1`path`; throws ApiError with the API's code and message. */
export async function api(path, { method, body } = {}) {
  const init = {
    method: method ?? (body === undefined ? 'GET' : 'POST'),
    headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    cache: 'no-store',
    credentials: 'omit',
  };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(`/api/v1${path}`, init);
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    // The token stopped working (rotated, removed by a reload): back to the sign-in page.
    if (res.status === 401 && token.get()) dispatchEvent(new Event('organism:signed-out'));
    throw new ApiError(res.status, json?.error?.code ?? `http.${res.status}`, json?.error?.message ?? text);
  }
  return json;
}

/** The Prometheus text of /metrics. */
export async function metricsText() {
  const res = await fetch('/metrics', { headers: headers(), cache: 'no-store', credentials: 'omit' });
  if (!res.ok) throw new ApiError(res.status, `http.${res.status}`, 'metrics not readable');
  return res.text();
}

function base64url(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replaceAll('=', '');
}

const sinks = new Set();
const states = new Set();
let socket;
let retry = 0;
let wanted = false;
/** undefined until the first connection opens or fails: the page then says "connecting". */
let connected;

/** Every stream event goes to every subscriber; pages filter what they need. */
export function onEvent(sink) {
  sinks.add(sink);
  return () => sinks.delete(sink);
}

/** Told `true` / `false` as the stream connects and drops. */
export function onStreamState(sink) {
  states.add(sink);
  sink(connected);
  return () => states.delete(sink);
}

function setConnected(value) {
  connected = value;
  for (const s of states) s(value);
}

/** Opens the one stream of this tab (reconnecting with backoff until closeStream). */
export function openStream() {
  wanted = true;
  if (socket) return;
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const t = token.get();
  const protocols = ['organism.v1', ...(t ? [`organism.token.${base64url(t)}`] : [])];
  const ws = new WebSocket(`${scheme}://${location.host}/api/v1/stream`, protocols);
  socket = ws;
  ws.onopen = () => {
    retry = 0;
    setConnected(true);
  };
  ws.onmessage = (frame) => {
    let event;
    try {
      event = JSON.parse(frame.data);
    } catch {
      return;
    }
    for (const sink of sinks) sink(event);
  };
  ws.onclose = () => {
    socket = undefined;
    setConnected(false);
    if (!wanted) return;
    retry = Math.min(retry + 1, 6);
    setTimeout(() => wanted && openStream(), 250 * 2 ** retry);
  };
}

export function closeStream() {
  wanted = false;
  socket?.close();
  socket = undefined;
}
