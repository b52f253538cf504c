// Tasks Completed from the cache (a task's `cache`, docs/workflows.md):
// the run's tasks say so ("cached": true, by their latest attempt), and
// the attempt that took the cached output is marked for the Gantt and
// the detail, which know attempts only.
export function markCached(data, tasks) {
  const cached = new Map(tasks.filter((t) => t.cached).map((t) => [t.id, t.attempts]));
  if (!cached.size) return data;
  const attempts = data.attempts.map((a) =>
    a.element === undefined && cached.get(a.task) === a.attempt ? Object.assign({}, a, { cached: true }) : a);
  return Object.assign({}, data, { attempts });
}

export const CACHED = ' (cached)';
