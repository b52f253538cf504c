// The Switchyard dashboard: the runs list kept live from the events
// stream (and a slow poll behind it), one run's DAG, Gantt and attempt
// detail, and its cancel and retry buttons.  State lives in the URL's
// hash (#run=ID) so that a reload shows the same run.
import { api, ApiError, token, setToken, forgetToken, followEvents } from './api.js';
import { el, clock, duration } from './svg.js';
import { drawDag } from './dag.js';
import { drawGantt, rowKey } from './gantt.js';
import { drawDetail } from './detail.js';
import { startViews, viewEvent, viewTick } from './views.js';
import { markCached } from './cached.js';

const $ = (id) => document.getElementById(id);
const POLL_MS = 10000, POLL_OFFLINE_MS = 3000;

const state = {
  runs: [], runId: null, run: null, attempts: null, dag: null, dagOf: null,
  task: null, pick: null, live: false, more: null, limit: 50,
  may: null, // what the kept token may do (GET /api/v1/token); null: no token kept
};

// --- the token: asked once, kept in this tab ---------------------------

// One dialog at a time: reads made together share its answer.
let asking = null;
function askToken() {
  if (!asking) asking = dialog().finally(() => { asking = null; });
  return asking;
}

function dialog() {
  const dlg = $('token-dialog'), input = $('token-input');
  input.value = '';
  return new Promise((resolve) => {
    const done = (v) => {
      $('token-form').onsubmit = null;
      $('token-cancel').onclick = null;
      dlg.close();
      resolve(v);
    };
    $('token-form').onsubmit = (ev) => { ev.preventDefault(); done(input.value.trim() || null); };
    $('token-cancel').onclick = () => done(null);
    dlg.showModal();
    input.focus();
  });
}

// Calls fn(); asks for the token first when `change` and none is kept,
// and once more when the host refuses the one kept (401, or 403 "the
// token is wrong": it is forgotten, the refusal shown).
async function withToken(change, fn) {
  if (change && !token()) {
    const t = await askToken();
    if (!t) return null;
    setToken(t);
    showForget();
  }
  const sent = token();
  try {
    return await fn();
  } catch (e) {
    // A token whose role is too low is still that token: kept.
    if (e instanceof ApiError && (e.status === 401 || (e.status === 403 && /token is wrong/.test(e.message)))) {
      // Not one a read made meanwhile was given.
      if (token() === sent) forgetToken();
      showForget();
      if (!change) {
        const t = token() || await askToken();
        if (t) { setToken(t); showForget(); return fn(); }
      }
    }
    throw e;
  }
}

function showForget() {
  $('btn-forget').hidden = !token();
  if (!token()) { state.may = null; showActions(); }
}

// The actions shown are those the kept token may do: a read token sees
// none, and no button it would be refused.  Without a token kept they
// are shown, and asking for one is the first step of a click.
function showActions() {
  const may = state.may;
  $('btn-cancel').hidden = !!may && !may.includes('cancel');
  $('btn-retry').hidden = !!may && !may.includes('retry');
  $('token-who').hidden = !may;
  $('token-who').textContent = may ? `token ${state.who} (${state.role})` : '';
}

// Asks the host what the kept token is, whenever it changes.
let roleOf = null;
async function loadRole() {
  const t = token();
  if (!t) { state.may = null; showActions(); return; }
  if (roleOf === t && state.may) return;
  try {
    const j = await api('GET', '/api/v1/token');
    if (token() !== t) return;
    roleOf = t;
    Object.assign(state, { may: j.may, who: j.name, role: j.role });
  } catch (e) {
    // A token the host no longer knows (taken out of its file) is dropped.
    if (e instanceof ApiError && e.status === 403 && token() === t) forgetToken();
    state.may = null;
    showForget();
  }
  showActions();
}

// --- the runs list ------------------------------------------------------

// Today's times without the date.
function when(ms) {
  const s = clock(ms);
  return s.slice(0, 10) === clock(Date.now()).slice(0, 10) ? s.slice(11) : s;
}

function stateBadge(s, parent, id) {
  return el('span', Object.assign({ class: `state s-${s}` }, id ? { id } : {}), s, parent);
}

function taskCounts(r) {
  const c = r.tasks || {};
  const done = c.Completed || 0;
  return `${done}/${r.n_tasks}` + (c.Failed ? `, ${c.Failed} failed` : '');
}

async function loadRuns() {
  const q = new URLSearchParams({ limit: state.limit });
  if ($('filter-state').value) q.set('state', $('filter-state').value);
  const j = await withToken(false, () => api('GET', '/api/v1/runs?' + q));
  state.runs = j.runs;
  state.more = j.next_after;
  drawRuns();
}

function drawRuns() {
  const body = $('runs').tBodies[0];
  body.replaceChildren();
  for (const r of state.runs) {
    const tr = el('tr', { 'data-run': r.run_id, 'data-status': r.status }, null, body);
    if (r.run_id === state.runId) tr.classList.add('selected');
    el('td', {}, '#' + r.run_id, tr);
    el('td', {}, r.tenant && r.tenant !== 'public' ? `${r.tenant}::${r.workflow}` : r.workflow, tr);
    stateBadge(r.status, el('td', { class: 'status' }, null, tr));
    el('td', {}, taskCounts(r), tr);
    el('td', {}, when(r.started || r.created), tr);
    el('td', {}, r.finished ? duration(r.duration_ms) : r.started ? duration(Date.now() - r.started) + '…' : '', tr);
    tr.tabIndex = 0;
    tr.addEventListener('click', () => { location.hash = 'run=' + r.run_id; });
    tr.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') location.hash = 'run=' + r.run_id;
    });
  }
  $('runs-empty').hidden = state.runs.length > 0;
  $('runs-more').hidden = state.more === null || state.more === undefined || state.limit >= 1000;
}

// --- one run ------------------------------------------------------------

async function loadRun() {
  const id = state.runId;
  if (!id) {
    $('run').hidden = true;
    $('run-none').hidden = false;
    return;
  }
  const [run, attempts] = await Promise.all([
    withToken(false, () => api('GET', `/api/v1/runs/${id}`)),
    withToken(false, () => api('GET', `/api/v1/runs/${id}/attempts`)),
  ]);
  if (id !== state.runId) return; // another run was picked meanwhile
  const wf = run.tenant && run.tenant !== 'public' ? `${run.tenant}::${run.workflow}` : run.workflow;
  if (state.dagOf !== wf) {
    try {
      const w = await api('GET', '/api/v1/workflows/' + encodeURIComponent(wf));
      state.dag = w.dag;
    } catch (e) {
      state.dag = { nodes: [], edges: [] }; // the workflow is gone: tasks unlinked
    }
    state.dagOf = wf;
  }
  state.run = run;
  state.attempts = markCached(attempts, run);
  drawRun();
}

function drawRun() {
  const run = state.run;
  $('run-none').hidden = true;
  $('run').hidden = false;
  $('run').dataset.run = run.run_id;
  $('run').dataset.status = run.status;
  $('run-title').textContent = `Run #${run.run_id} · ${run.workflow}`;
  const badge = $('run-status');
  badge.className = `state s-${run.status}`;
  badge.textContent = run.status;
  $('run-error').hidden = !run.error;
  $('run-error').textContent = run.error || '';
  $('run-times').textContent = [
    run.created && 'submitted ' + clock(run.created),
    run.started && 'started ' + clock(run.started),
    run.finished && 'ended ' + clock(run.finished) + ' (' + duration(run.finished - run.started) + ')',
    run.owner && 'held by ' + run.owner,
  ].filter(Boolean).join(' · ');
  $('btn-cancel').disabled = !(run.status === 'Pending' || run.status === 'Running');
  $('btn-retry').disabled = !(run.status === 'Failed' || run.status === 'Cancelled');
  drawDag($('dag'), state.dag, run.tasks, state.task, pickTask);
  drawGantt($('gantt'), guessStarts(state.attempts, state.dag), run.tasks.map((t) => t.id),
            state.pick, pickAttempt);
  if (state.pick) {
    const a = state.attempts.attempts.find((b) => `${rowKey(b)}/${b.attempt}` === state.pick);
    if (a && $('detail').dataset.shown !== JSON.stringify(a)) showAttempt(a);
  }
}

// The store keeps no start for an attempt that is not its task's latest;
// the API gives the previous attempt's end (or the run's creation).  A
// first attempt cannot have started before what it comes `after` ended,
// so its bar starts there instead.
function guessStarts(data, dag) {
  const preds = new Map();
  for (const e of dag.edges) (preds.get(e.to) || preds.set(e.to, []).get(e.to)).push(e.from);
  const lastEnd = new Map();
  for (const a of data.attempts) {
    if (a.end !== null && a.outcome === 'Completed')
      lastEnd.set(a.task, Math.max(lastEnd.get(a.task) || 0, a.end));
  }
  const attempts = data.attempts.map((a) => {
    if (a.start_known || a.end === null) return a;
    const after = Math.max(a.start, ...(preds.get(a.task) || []).map((p) => lastEnd.get(p) || 0));
    return Object.assign({}, a, { start: Math.min(after, a.end) });
  });
  return Object.assign({}, data, { attempts });
}

// A task: its latest attempt.
function pickTask(id) {
  state.task = id;
  const mine = state.attempts.attempts.filter((a) => a.task === id);
  if (!mine.length) {
    state.pick = null;
    const d = $('detail');
    d.hidden = false;
    d.replaceChildren();
    const t = (state.run.tasks || []).find((x) => x.id === id);
    // A Waiting task says what it waits for (a key, a pool, a tenant bound).
    el('p', { class: 'muted', id: 'detail-waiting' },
       t && t.waiting_for ? `${id} is Waiting: ${t.waiting_for}.` : `${id} has not started.`, d);
    drawRun();
    return;
  }
  pickAttempt(mine.reduce((a, b) => ((b.end ?? Infinity) >= (a.end ?? Infinity) ? b : a)));
}

function pickAttempt(a) {
  state.task = a.task;
  state.pick = `${rowKey(a)}/${a.attempt}`;
  $('detail').dataset.shown = '';
  drawRun();
}

function showAttempt(a) {
  $('detail').dataset.shown = JSON.stringify(a);
  drawDetail($('detail'), state.runId, a, state.attempts.now);
}

// --- cancel and retry ---------------------------------------------------

function say(text, refused) {
  const m = $('action-msg');
  m.hidden = false;
  m.textContent = text;
  m.classList.toggle('refused', !!refused);
}

async function act(what) {
  const id = state.runId;
  const path = `/api/v1/runs/${id}/${what}`;
  try {
    const j = await withToken(true, () => api('POST', path, what === 'retry' ? {} : undefined));
    if (!j) return; // no token given
    if (what === 'retry')
      say(`Run #${id} goes again: ${j.rerun.map((t) => t.id).join(', ')} (kept: ${j.kept.length}).`);
    else
      say(j.requested ? `Run #${id}: cancel requested.` : `Run #${id} cancelled.`);
  } catch (e) {
    say(`${what} refused: ${e.message}`, true);
  }
  refresh();
}

// --- keeping it live ----------------------------------------------------

// Events come in bursts: one read of each after a burst, and never more
// than a third of the time spent reading and drawing (a run of thousands
// of tasks is not redrawn at every event).
let pending = null, busy = false, again = false, cost = 0;
function refresh() {
  if (busy) { again = true; return; }
  if (pending) return;
  pending = setTimeout(async () => {
    pending = null;
    busy = true;
    const t0 = performance.now();
    try {
      await loadRuns();
      await loadRole();
      await loadRun();
    } catch (e) {
      $('health').textContent = e.message;
    }
    cost = performance.now() - t0;
    busy = false;
    if (again) { again = false; refresh(); }
  }, Math.max(150, 2 * cost));
}

async function loadHealth() {
  try {
    const h = await api('GET', '/api/v1/health');
    $('health').textContent = `${h.owner} · ${h.status} · ${h.running} task(s) running`;
  } catch (e) {
    $('health').textContent = e.message;
  }
}

function route() {
  const m = /run=(\d+)/.exec(location.hash);
  const id = m ? Number(m[1]) : null;
  if (id !== state.runId) {
    state.runId = id;
    state.task = state.pick = null;
    $('detail').hidden = true;
    $('detail').dataset.shown = '';
    $('action-msg').hidden = true;
  }
  drawRuns();
  refresh();
}

function start() {
  $('btn-cancel').addEventListener('click', () => act('cancel'));
  $('btn-retry').addEventListener('click', () => act('retry'));
  $('btn-forget').addEventListener('click', () => { forgetToken(); showForget(); });
  showActions();
  $('filter-state').addEventListener('change', refresh);
  // The list is read whole each time (it is kept live): a longer one.
  $('runs-more').addEventListener('click', () => {
    state.limit = Math.min(1000, state.limit + 50);
    refresh();
  });
  window.addEventListener('hashchange', route);
  showForget();
  startViews((path) => withToken(false, () => api('GET', path)));
  followEvents((kind) => { viewEvent(kind); refresh(); }, (live) => {
    state.live = live;
    $('live').textContent = live ? 'live' : 'offline';
    $('live').className = 'pill ' + (live ? 'on' : 'off');
    if (live) refresh();
  });
  // Runs another host runs send no event here: read now and then anyway,
  // more often while the stream is down.
  const tick = () => {
    refresh();
    loadHealth();
    viewTick();
    setTimeout(tick, state.live ? POLL_MS : POLL_OFFLINE_MS);
  };
  tick();
  route();
  document.body.dataset.ready = '1';
}

start();
