// A Gantt of a run's attempts (GET /api/v1/runs/ID/attempts): a row per
// task (per element of a mapped task), a bar per attempt from its start
// to its end (or now), coloured by its outcome.  A start the store does
// not keep is drawn from the previous attempt's end, dashed.
import { svg, legend, duration, clip } from './svg.js';
import { CACHED } from './cached.js';

const LABEL = 150, ROW = 22, BAR = 14, TOP = 22, RIGHT = 20;

// A tick step of 1, 2 or 5 times a power of ten (in ms) giving ~8 ticks.
function step(span) {
  const raw = span / 8;
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

export function rowKey(a) {
  return a.element === undefined ? a.task : `${a.task}[${a.element}]`;
}

// data: the attempts answer; order: task ids in the run's order;
// selected: "task/attempt"; onPick(attempt) on a click.
export function drawGantt(box, data, order, selected, onPick) {
  box.replaceChildren();
  const bars = data.attempts;
  if (!bars.length) {
    const p = document.createElement('p');
    p.className = 'muted';
    p.textContent = 'No attempt has started yet.';
    box.appendChild(p);
    return;
  }
  const rank = new Map(order.map((id, i) => [id, i]));
  const keys = [...new Set(bars.map(rowKey))];
  keys.sort((a, b) => {
    const ta = a.replace(/\[\d+\]$/, ''), tb = b.replace(/\[\d+\]$/, '');
    return (rank.get(ta) ?? 1e9) - (rank.get(tb) ?? 1e9) || a.localeCompare(b, 'en', { numeric: true });
  });
  const row = new Map(keys.map((k, i) => [k, i]));
  const endOf = (a) => (a.end ?? data.now);
  const t0 = Math.min(data.created || Infinity, ...bars.map((a) => a.start));
  const t1 = Math.max(t0 + 1, ...bars.map(endOf));
  const width = Math.max(600, box.clientWidth - 4);
  const plot = width - LABEL - RIGHT;
  const x = (t) => LABEL + ((t - t0) / (t1 - t0)) * plot;
  const height = TOP + keys.length * ROW + 6;
  const root = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
                            'aria-label': 'attempts over time' }, box);
  const st = step(t1 - t0);
  for (let t = 0; t <= t1 - t0; t += st) {
    svg('line', { class: 'axis', x1: x(t0 + t), x2: x(t0 + t), y1: TOP - 4, y2: height }, root);
    const tx = svg('text', { class: 'tick', x: x(t0 + t), y: 12, 'text-anchor': 'middle' }, root);
    tx.textContent = t === 0 ? '0' : '+' + duration(t);
  }
  keys.forEach((k, i) => {
    const y = TOP + i * ROW;
    const label = svg('text', { x: 6, y: y + BAR - 2 }, root);
    const cached = bars.some((a) => a.cached && rowKey(a) === k);
    label.textContent = cached ? clip(k, 12) + CACHED : clip(k, 21);
  });
  for (const a of bars) {
    const y = TOP + row.get(rowKey(a)) * ROW;
    const x1 = x(a.start), x2 = Math.max(x(endOf(a)), x1 + 3);
    const outcome = a.outcome;
    const key = `${rowKey(a)}/${a.attempt}`;
    const r = svg('rect', {
      class: `bar s-${outcome}${a.start_known ? '' : ' guess'}${key === selected ? ' sel' : ''}`,
      x: x1, y, width: x2 - x1, height: BAR, rx: 2,
      'data-task': a.task, 'data-attempt': a.attempt, 'data-outcome': outcome,
      'data-cached': a.cached ? '1' : '0' }, root);
    const tip = svg('title', {}, r);
    tip.textContent = `${rowKey(a)} attempt ${a.attempt}: ${outcome}${a.cached ? CACHED : ''}, ` +
      duration(endOf(a) - a.start) + (a.end === null ? ' so far' : '') +
      (a.start_known ? '' : ' (start not recorded: drawn from the previous attempt\'s end)') +
      (a.detail ? `\n${a.detail}` : '') + (a.note ? `\n${a.note}` : '');
    r.addEventListener('click', () => onPick(a));
  }
  legend(['Running', 'Completed', 'Failed', 'TimedOut', 'Deferred', 'Abandoned',
          'Interrupted', 'Cancelled'], box);
}
