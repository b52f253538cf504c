// Tasks Completed from the cache (a task's `cache`, docs/workflows.md):
// the run's tasks say so ("cached": true, by their latest attempt), and
// the attempt that took the cached output is marked for the Gantt and
// the detail, which know attempts only: `cached` is the run event's line
// ("completed from the cache: the output of run N").
export function markCached(data, run) {
  const cached = new Map(run.tasks.filter((t) => t.cached).map((t) => [t.id, t.attempts]));
  if (!cached.size) return data;
  const line = (a) => {
    const e = (run.events || []).find((v) => v.kind === 'cached' && v.task === a.task &&
                                             v.attempt === a.attempt);
    return e && e.detail ? e.detail : 'completed from the cache';
  };
  const attempts = data.attempts.map((a) =>
    a.element === undefined && cached.get(a.task) === a.attempt ? Object.assign({}, a, { cached: line(a) }) : a);
  return Object.assign({}, data, { attempts });
}

export const CACHED = ' (cached)';
