// A run's DAG as SVG: a layered layout computed here (a task's layer is
// the longest path to it from a task with no `after`; within a layer,
// tasks sit near the mean position of what they follow), edges as curves,
// each task filled with its state's colour.
import { svg, legend, textClass, clip } from './svg.js';
import { CACHED } from './cached.js';

const W = 140, H = 34, GX = 44, GY = 14, PAD = 12;

export function layout(nodes, edges) {
  const ids = nodes.map((n) => n.id);
  const preds = new Map(ids.map((id) => [id, []]));
  const succs = new Map(ids.map((id) => [id, []]));
  for (const e of edges) {
    if (preds.has(e.to) && succs.has(e.from)) {
      preds.get(e.to).push(e.from);
      succs.get(e.from).push(e.to);
    }
  }
  // Kahn's order; a cycle (never valid) leaves its tasks in layer 0.
  const layer = new Map(ids.map((id) => [id, 0]));
  const indeg = new Map(ids.map((id) => [id, preds.get(id).length]));
  const queue = ids.filter((id) => indeg.get(id) === 0);
  while (queue.length) {
    const id = queue.shift();
    for (const s of succs.get(id)) {
      layer.set(s, Math.max(layer.get(s), layer.get(id) + 1));
      indeg.set(s, indeg.get(s) - 1);
      if (indeg.get(s) === 0) queue.push(s);
    }
  }
  const layers = [];
  for (const id of ids) (layers[layer.get(id)] ||= []).push(id);
  const row = new Map();
  layers.forEach((ids, l) => {
    if (l > 0) {
      const mean = (id) => {
        const p = preds.get(id);
        return p.length ? p.reduce((a, q) => a + row.get(q), 0) / p.length : Infinity;
      };
      ids.sort((a, b) => mean(a) - mean(b));
    }
    ids.forEach((id, i) => row.set(id, i));
  });
  const pos = new Map();
  for (const id of ids) {
    pos.set(id, { x: PAD + layer.get(id) * (W + GX), y: PAD + row.get(id) * (H + GY) });
  }
  const width = PAD * 2 + Math.max(1, layers.length) * (W + GX) - GX;
  const height = PAD * 2 + Math.max(1, ...layers.map((l) => l.length)) * (H + GY) - GY;
  return { pos, width, height };
}

// dag: {nodes: [{id}], edges: [{from, to}]}; tasks: the run's tasks
// (id, status, attempts, map).  onPick(taskId) on a click.
export function drawDag(box, dag, tasks, selected, onPick) {
  box.replaceChildren();
  const byId = new Map(tasks.map((t) => [t.id, t]));
  // Tasks of the run the workflow no longer has are drawn too, unlinked.
  const nodes = dag.nodes.slice();
  for (const t of tasks) if (!nodes.some((n) => n.id === t.id)) nodes.push({ id: t.id });
  const { pos, width, height } = layout(nodes, dag.edges);
  const root = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
                            'aria-label': 'the run\'s tasks and their states' }, box);
  const defs = svg('defs', {}, root);
  const m = svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5,
                            markerWidth: 7, markerHeight: 7, orient: 'auto' }, defs);
  svg('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#8a94a6' }, m);
  for (const e of dag.edges) {
    const a = pos.get(e.from), b = pos.get(e.to);
    if (!a || !b) continue;
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
    svg('path', { class: 'edge', d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`,
                  'marker-end': 'url(#arrow)' }, root);
  }
  for (const n of nodes) {
    const t = byId.get(n.id);
    const state = t ? t.status : 'NotStarted';
    const p = pos.get(n.id);
    const g = svg('g', { class: `node ${state}${n.id === selected ? ' sel' : ''}`,
                         'data-task': n.id, 'data-state': state,
                         transform: `translate(${p.x},${p.y})` }, root);
    svg('rect', { class: 's-' + state, width: W, height: H, rx: 5 }, g);
    let label = clip(n.id, t && t.cached ? 10 : 18);
    if (t && t.attempts > 1) label += ` ×${t.attempts}`;
    if (t && t.cached) { label += CACHED; g.dataset.cached = '1'; }
    const txt = svg('text', { class: textClass(state), x: 8, y: H / 2 + 4 }, g);
    txt.textContent = label;
    if (t && t.map) {
      const done = (t.map.elements || {}).Completed || 0, all = t.map.size || 0;
      const sub = svg('text', { class: textClass(state), x: W - 6, y: H - 5,
                                'text-anchor': 'end', 'font-size': 10 }, g);
      sub.textContent = `${done}/${all}`;
    }
    const tip = svg('title', {}, g);
    tip.textContent = `${n.id}: ${state}` + (t && t.attempts ? `, ${t.attempts} attempt(s)` : '') +
                      (t && t.executor ? ` on ${t.executor}` : '') + (t && t.cached ? CACHED : '') + (t && t.error ? `
${t.error}` : '') +
                      (t && t.waiting_for ? `
${t.waiting_for}` : '');
    g.addEventListener('click', () => onPick(n.id));
  }
  legend(['NotStarted', 'Ready', 'Waiting', 'Running', 'Completed', 'Failed', 'Skipped',
          'Dropped', 'Cancelled'], box);
}
