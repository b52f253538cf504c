#!/bin/sh
# The admin API's reads, open on loopback: health, runs (filters, paging,
# one run with its tasks and events), workflows with their DAG, instances,
# routes explained, the metrics; unknown paths 404, wrong methods 405 with Allow, bad
# ids and queries 400 naming the parameter.
. "$SY_SRCDIR/tests/admin/lib.sh"
make_admin_host
cat >>"$host/switchyard.cfg" <<'CFG'
routes = { default = "default"; rules = ( { match = "*::etl::load"; executor = "default"; } ); };
CFG
workflow etl <<'WF'
workflow = {
  name = "etl";
  tasks = (
    { id = "extract"; command = ["true"]; },
    { id = "load"; after = ["extract"]; command = ["true"]; },
    { id = "report"; after = ["extract", "load"]; command = ["true"]; }
  );
};
WF
workflow bad <<'WF'
workflow = { name = "bad"; tasks = ( { id = "x"; command = ["false"]; } ); };
WF
for w in etl etl bad; do run submit "$w"; done
start_serve
ok $? "serve listens on the port the kernel picked"
for i in 1 2 3; do wait_status "$i" "$( [ $i = 3 ] && echo Failed || echo Completed)"; done

api GET /api/v1/health
code_is 200 "health"
jq_is serving 'b["status"]' "says it serves"

api GET /api/v1/runs
code_is 200 "runs"
jq_is '[3, 2, 1]' '[r["run_id"] for r in b["runs"]]' "newest first"
api GET '/api/v1/runs?state=Completed'
jq_is '[2, 1]' '[r["run_id"] for r in b["runs"]]' "filtered by state"
api GET '/api/v1/runs?workflow=bad'
jq_is '[3]' '[r["run_id"] for r in b["runs"]]' "filtered by workflow"
api GET '/api/v1/runs?workflow=public::etl&limit=1'
jq_is '[[2], 2]' '[[r["run_id"] for r in b["runs"]], b["next_after"]]' "a page, and where the next starts"
api GET '/api/v1/runs?workflow=public::etl&limit=1&after=2'
jq_is '[1]' '[r["run_id"] for r in b["runs"]]' "the next page"
api GET '/api/v1/runs?state=Sleeping'
code_is 400 "an unknown state is refused"
has "query 'state'" "naming the parameter"
api GET '/api/v1/runs?limit=0'
code_is 400 "a limit out of range is refused"
has "query 'limit'" "naming the parameter"

api GET /api/v1/runs/1
code_is 200 "one run"
jq_is '["Completed", ["extract", "load", "report"], 1]' \
    '[b["status"], [t["id"] for t in b["tasks"]], b["tasks"][0]["attempts"]]' \
    "with its tasks and their attempts"
jq_is true '"events" in b and "created" in b' "and its events and times"
api GET /api/v1/runs/99
code_is 404 "an unknown run is 404"
api GET /api/v1/runs/abc
code_is 400 "a malformed run id is 400"

api GET /api/v1/workflows
code_is 200 "workflows"
jq_is '["bad", "etl"]' 'sorted(w["name"] for w in b["workflows"])' "each workflow"
api GET /api/v1/workflows/etl
code_is 200 "one workflow"
jq_is '[["extract", "load"], ["extract", "report"], ["load", "report"]]' \
    'sorted([e["from"], e["to"]] for e in b["dag"]["edges"])' "its DAG's edges"
jq_is '["default", "default", "default"]' '[n["executor"] for n in b["dag"]["nodes"]]' \
    "each node with the instance its route names"
api GET /api/v1/workflows/nope
code_is 404 "an unknown workflow is 404"

api GET /api/v1/instances
code_is 200 "instances"
jq_is '[["default", "thread", true, "ok"]]' \
    '[[i["name"], i["plugin"], i["healthy"], i["health"]] for i in b["instances"]]' \
    "each instance and its health"
jq_is false '"settings" in b["instances"][0]' "never their settings"

api GET '/api/v1/routes?namespace=public::etl::load'
code_is 200 "a namespace explained"
jq_is '["default", 1, true]' '[b["executor"], len(b["tried"]), b["tried"][0]["matched"]]' \
    "the instance, the rules tried and the one that won"
api GET '/api/v1/routes?namespace=a::::b'
code_is 400 "a malformed namespace is 400"
api GET /api/v1/routes
jq_is '*::etl::load' 'b["rules"][0]["match"]' "without one: the rules"

api GET /metrics
code_is 200 "GET /metrics"
case "$headers" in *"Content-Type: text/plain; version=0.0.4"*) ok 0 "in the Prometheus text format" ;;
*) ok 1 "in the Prometheus text format" ;; esac
has "switchyard_" "with the host's metrics"
if command -v promtool >/dev/null 2>&1; then
    out=$(printf '%s\n' "$body" | promtool check metrics 2>&1)
    ok $? "promtool check metrics passes on it"
else
    echo "ok $((tap_n + 1)) - promtool check metrics # SKIP promtool is not installed (Debian: prometheus)"
    tap_n=$((tap_n + 1))
fi

api GET /api/v1/nothing-here
code_is 404 "an unknown path is 404"
api PUT /api/v1/runs
code_is 405 "a wrong method is 405"
case "$headers" in *"Allow: GET, POST"*) ok 0 "with the methods allowed" ;; *) ok 1 "with the methods allowed" ;; esac
api GET /api/v1/reload
code_is 405 "reload is a POST"
api GET /api/v1/runs/1/cancel
code_is 405 "cancel is a POST"

stop_serve
ok $? "serve stops on SIGTERM"
cleanup_host
done_testing
