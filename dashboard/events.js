// The named events view (#events): the latest events, newest first, with
// their name, key, a preview of the payload, and what each trigger
// listening to that name made of it (GET /api/v1/named-events, whose
// events say which triggers settled them, and GET /api/v1/triggers).
import { el, clip, clock } from './svg.js';

const PREVIEW = 90;

export function triggerName(t) {
  return (t.tenant && t.tenant !== 'public' ? t.tenant + '::' : '') + `${t.workflow}/${t.name}`;
}

// What trigger t made of event ev: {text, kind} ("fired", "passed",
// "pending", "before"), or null when t does not listen to its name.
export function outcome(t, ev) {
  if (!t.parts.some((p) => p.event === ev.name)) return null;
  const key = `${t.tenant}::${t.workflow}::${t.name}`;
  const s = (ev.triggers || []).find((u) => u.trigger === key);
  if (s && s.reason) return { kind: 'passed', text: 'passed over: ' + s.reason };
  if (s) return { kind: 'fired', text: s.run ? `run #${s.run}` : 'consumed', run: s.run };
  if (ev.created < t.since) return { kind: 'before', text: 'before it listened' };
  return { kind: 'pending', text: 'pending' };
}

export function drawEvents(box, events, triggers) {
  box.replaceChildren();
  if (!events.length) {
    el('p', { class: 'muted', id: 'events-empty' }, 'No named event yet (switchyard emit NAME, or POST /api/v1/events).', box);
    return;
  }
  const table = el('table', { id: 'events' }, null, box);
  const head = el('tr', {}, null, el('thead', {}, null, table));
  for (const h of ['event', 'name', 'key', 'recorded', 'payload', 'triggers']) el('th', {}, h, head);
  const body = el('tbody', {}, null, table);
  for (const ev of events) {
    const tr = el('tr', { 'data-event': ev.event_id, 'data-name': ev.name }, null, body);
    el('td', {}, '#' + ev.event_id, tr);
    el('td', {}, ev.name, tr);
    el('td', {}, ev.key ?? '', tr);
    el('td', {}, clock(ev.created), tr);
    const text = JSON.stringify(ev.data);
    el('td', { class: 'payload', title: clip(text, 2000) }, clip(text, PREVIEW), tr);
    const cell = el('td', { class: 'uses' }, null, tr);
    for (const t of triggers) {
      const o = outcome(t, ev);
      if (!o) continue;
      const chip = el('span', { class: 'use ' + o.kind, 'data-trigger': triggerName(t),
                                'data-outcome': o.kind }, null, cell);
      chip.appendChild(document.createTextNode(triggerName(t) + ': '));
      if (o.run) el('a', { href: '#run=' + o.run }, o.text, chip);
      else chip.appendChild(document.createTextNode(o.text));
    }
    if (!cell.childNodes.length) el('span', { class: 'muted' }, 'no trigger listens', cell);
  }
}
