// The admin API from the page: JSON requests carrying the bearer token
// when one is kept (sessionStorage: this tab only, gone when it closes),
// and the events stream read with fetch so that it can carry it too
// (EventSource cannot send a header).
const KEY = 'switchyard.token';

export function token() { return sessionStorage.getItem(KEY); }
export function setToken(t) { sessionStorage.setItem(KEY, t.trim()); }
export function forgetToken() { sessionStorage.removeItem(KEY); }

export class ApiError extends Error {
  constructor(status, line) { super(line); this.status = status; }
}

function headers(extra) {
  const h = Object.assign({}, extra);
  const t = token();
  if (t) h.Authorization = 'Bearer ' + t;
  return h;
}

// The API's own error line on refusal ({"error": "..."}), else the status.
export async function api(method, path, body) {
  const init = { method, headers: headers(), cache: 'no-store' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let r;
  try {
    r = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'the host does not answer (' + e.message + ')');
  }
  const text = await r.text();
  let j = null;
  try { j = JSON.parse(text); } catch (e) { /* not JSON: the status says it */ }
  if (!r.ok) throw new ApiError(r.status, j && j.error ? j.error : `HTTP ${r.status}`);
  return j;
}

// Calls onEvent(kind, data) for each server-sent event until stop();
// reconnects after a pause; onLive(bool) says whether it is connected.
export function followEvents(onEvent, onLive) {
  let stopped = false, ctrl = null;
  const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
  (async () => {
    while (!stopped) {
      try {
        ctrl = new AbortController();
        const r = await fetch('/api/v1/events', { headers: headers(), cache: 'no-store',
                                                   signal: ctrl.signal });
        if (!r.ok) throw new Error('HTTP ' + r.status);
        onLive(true);
        const reader = r.body.getReader();
        const dec = new TextDecoder();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += dec.decode(value, { stream: true });
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            let kind = 'message', data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('event:')) kind = line.slice(6).trim();
              else if (line.startsWith('data:')) data += line.slice(5).trim();
            }
            if (data) {
              try { onEvent(kind, JSON.parse(data)); } catch (e) { /* a bad line: skipped */ }
            }
          }
        }
      } catch (e) { /* reconnect below */ }
      onLive(false);
      if (!stopped) await sleep(2000);
    }
  })();
  return () => { stopped = true; if (ctrl) ctrl.abort(); };
}
