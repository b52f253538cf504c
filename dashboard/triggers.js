// The triggers view (#triggers): each workflow trigger (GET
// /api/v1/triggers) with what fires it, its last firing and its run, the
// runs in flight, what each part has pending (for an AND, which part is
// still waiting), and the last events passed over and why.
import { el, clock, duration } from './svg.js';
import { triggerName } from './events.js';

function partText(p) {
  const when = (p.when || []).map((c) => `${c.path} ${c.op} ${JSON.stringify(c.value)}`);
  if (p.event) return `event ${p.event}` + (when.length ? ' when ' + when.join(' and ') : '');
  return `run of ${p.run} ending ` + (p.states || ['Completed']).join(' or ');
}

function kind(t) {
  if (t.all) return `all of ${t.parts.length}`;
  return t.parts[0] && t.parts[0].event ? 'event' : 'run';
}

export function drawTriggers(box, triggers, events) {
  box.replaceChildren();
  if (!triggers.length) {
    el('p', { class: 'muted', id: 'triggers-empty' }, 'No workflow has a trigger.', box);
    return;
  }
  const names = new Map(events.map((e) => [e.event_id, e.name]));
  for (const t of triggers) {
    const card = el('div', { class: 'trigger', 'data-trigger': triggerName(t) }, null, box);
    const head = el('div', { class: 'pane-head' }, null, card);
    el('h3', {}, triggerName(t), head);
    el('span', { class: 'pill kind' }, kind(t), head);
    const dl = el('dl', {}, null, card);
    const row = (k, v, cls) => {
      el('dt', {}, k, dl);
      const dd = el('dd', cls ? { class: cls } : {}, null, dl);
      if (v instanceof Node) dd.appendChild(v); else dd.textContent = v;
      return dd;
    };
    row('workflow', (t.tenant && t.tenant !== 'public' ? t.tenant + '::' : '') + t.workflow);
    const last = document.createElement('span');
    if (t.last_fired) {
      last.appendChild(document.createTextNode(clock(t.last_fired) + ' → '));
      el('a', { href: '#run=' + t.last_run }, 'run #' + t.last_run, last);
      last.appendChild(document.createTextNode(` (${t.firings} firing${t.firings === 1 ? '' : 's'})`));
    } else {
      last.textContent = 'never';
    }
    row('last firing', last, 'last-firing');
    row('in flight', String(t.in_flight) + (t.max_in_flight ? ` of at most ${t.max_in_flight}` : ''));
    if (t.debounce_ms) row('debounce', duration(t.debounce_ms) + `, ${t.payloads || 'last'} payload(s)`);
    const parts = el('ul', { class: 'parts' }, null, row(t.all ? 'parts (AND)' : 'fires on', ''));
    for (const p of t.parts) {
      const waiting = t.all && !p.pending;
      el('li', { class: waiting ? 'waiting' : '', 'data-pending': p.pending },
         partText(p) + ` · ${p.pending} pending` + (waiting ? ' · still waiting' : ''), parts);
    }
    if (t.passed.length) {
      const ul = el('ul', { class: 'passed' }, null, row('passed over', ''));
      for (const p of t.passed) {
        const what = p.source === 'event' ? `event #${p.id}` + (names.has(p.id) ? ` (${names.get(p.id)})` : '')
                                          : `run #${p.id}`;
        el('li', { 'data-item': p.id }, `${what} at ${clock(p.at)}: ${p.reason}`, ul);
      }
    } else {
      row('passed over', 'none');
    }
  }
}
