// Small helpers for building SVG and HTML without a library.
const NS = 'http://www.w3.org/2000/svg';

export function svg(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

export function el(tag, attrs, text, parent) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined && text !== null) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// Fills that white text reads on; the others take dark text.
const DARK = new Set(['Running', 'Completed', 'Failed', 'TimedOut', 'Abandoned',
                      'Interrupted', 'Cancelled', 'Skipped', 'Dropped']);
export function textClass(state) { return DARK.has(state) ? 'on-dark' : 'on-light'; }

export function legend(states, parent) {
  const d = el('div', { class: 'legend' }, null, parent);
  for (const s of states) {
    const item = el('span', {}, null, d);
    el('i', { class: 's-' + s }, null, item);
    item.appendChild(document.createTextNode(s));
  }
  return d;
}

export function clip(s, n) { return s.length > n ? s.slice(0, n - 1) + '…' : s; }

export function duration(ms) {
  if (ms === null || ms === undefined || ms < 0) return '';
  if (ms < 1000) return ms + ' ms';
  const s = ms / 1000;
  if (s < 60) return (s < 10 ? s.toFixed(1) : Math.round(s)) + ' s';
  const m = Math.floor(s / 60);
  if (m < 60) return m + ' min ' + Math.round(s % 60) + ' s';
  return Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
}

export function clock(ms) {
  if (!ms) return '';
  const d = new Date(ms);
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
         `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}
