// One attempt in detail: its outcome and times, the instance it ran on,
// the error and the backend's note (a Lambda throttle reason, a GPU's
// UUID and Xid, ...), and the tail of what it wrote (the logs endpoint).
import { api } from './api.js';
import { el, clock, duration } from './svg.js';
import { CACHED } from './cached.js';

const TAIL = 4000;

export async function drawDetail(box, runId, a, now) {
  box.hidden = false;
  box.replaceChildren();
  const head = a.element === undefined ? a.task : `${a.task}[${a.element}]`;
  el('h3', {}, `Attempt ${a.attempt} of ${head}`, box);
  const dl = el('dl', {}, null, box);
  const row = (k, v, id) => {
    if (v === null || v === undefined || v === '') return;
    el('dt', {}, k, dl);
    el('dd', id ? { id } : {}, String(v), dl);
  };
  row('outcome', a.outcome + (a.cached ? CACHED : ''), 'detail-outcome');
  row('started', clock(a.start) + (a.start_known ? '' : ' (not recorded: the previous attempt\'s end)'));
  row('ended', a.end ? clock(a.end) : 'still running');
  row('took', duration((a.end ?? now) - a.start));
  row('instance', a.executor);
  row('cache', a.cached, 'detail-cache');
  // A deferred attempt's detail is the backend's reason (a Lambda throttle).
  row(a.outcome === 'Deferred' ? 'deferred' : 'error', a.detail, 'detail-error');
  row('backend', a.note, 'detail-note');
  const logs = el('div', { id: 'detail-logs' }, null, box);
  el('p', { class: 'muted' }, 'reading the logs…', logs);
  try {
    const q = new URLSearchParams({ task: a.task, attempt: a.attempt });
    const j = await api('GET', `/api/v1/runs/${runId}/logs?${q}`);
    logs.replaceChildren();
    const mine = j.logs.filter((l) => a.element === undefined || l.element === undefined ||
                                      l.element === a.element);
    if (!mine.length) el('p', { class: 'muted' }, 'It wrote nothing (or nothing was kept).', logs);
    for (const l of mine) {
      const cut = l.text.length > TAIL;
      el('div', { class: 'muted' },
         `${l.stream}, ${l.size} bytes` + (l.dropped ? `, ${l.dropped} left out` : '') +
         (cut ? `, last ${TAIL} characters` : ''), logs);
      el('pre', {}, cut ? l.text.slice(-TAIL) : l.text, logs);
    }
  } catch (e) {
    logs.replaceChildren();
    el('p', { class: 'error' }, 'logs: ' + e.message, logs);
  }
}
