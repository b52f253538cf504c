// The views beside the runs (#events, #triggers): shown instead of the
// runs and the run when the address names one, read from the API, and
// read again when the events stream tells of a named event, a firing or
// a run's end (a trigger's runs in flight change), at most every 300 ms.
import { ApiError } from './api.js';
import { el } from './svg.js';
import { drawEvents } from './events.js';
import { drawTriggers } from './triggers.js';

const $ = (id) => document.getElementById(id);
const LIMIT = 50, AGAIN_MS = 300;
let read = null, timer = null, busy = false, again = false;

function current() {
  const m = /^#(events|triggers)$/.exec(location.hash);
  return m ? m[1] : null;
}

function show() {
  const v = current();
  document.querySelector('main').classList.toggle('view', !!v);
  $('runs-pane').hidden = $('run-pane').hidden = !!v;
  $('events-pane').hidden = v !== 'events';
  $('triggers-pane').hidden = v !== 'triggers';
  for (const a of document.querySelectorAll('#views a'))
    a.classList.toggle('current', a.hash === (v ? '#' + v : '#runs'));
  if (v) soon(0);
}

async function load() {
  const v = current();
  if (!v) return;
  const box = $(v + '-list');
  try {
    const [ev, tr] = await Promise.all([read(`/api/v1/named-events?limit=${LIMIT}`),
                                        read('/api/v1/triggers')]);
    if (!ev || !tr || current() !== v) return;
    if (v === 'events') drawEvents(box, ev.events, tr.triggers);
    else drawTriggers(box, tr.triggers, ev.events);
    box.dataset.ready = '1';
  } catch (e) {
    // A token that may not read sees nothing of them, as of the runs.
    box.replaceChildren();
    el('p', { class: 'error' }, (e instanceof ApiError && e.status === 403 ? 'refused: ' : '') +
       e.message, box);
  }
}

function soon(ms) {
  if (busy) { again = true; return; }
  if (timer) return;
  timer = setTimeout(async () => {
    timer = null;
    busy = true;
    await load();
    busy = false;
    if (again) { again = false; soon(AGAIN_MS); }
  }, ms ?? AGAIN_MS);
}

// reader(path): a GET through the page's token handling (app.js).
export function startViews(reader) {
  read = reader;
  window.addEventListener('hashchange', show);
  show();
}

// Each event of the stream: what may change these views.
export function viewEvent(kind) {
  if (current() && (kind === 'named' || kind === 'trigger' || kind === 'run')) soon();
}

// Now and then without the stream (another host's firings).
export function viewTick() { if (current()) soon(); }
