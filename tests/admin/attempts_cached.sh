#!/bin/sh
# GET /api/v1/runs/ID/attempts marks an attempt completed from the cache
# ("cached": true, the cache's note as its detail); an attempt that ran
# is "cached": false.
. "$SY_SRCDIR/tests/admin/lib.sh"
make_admin_host
workflow conv <<'WF'
workflow = { name = "conv"; tasks = (
  { id = "a"; command = ["true"]; cache = { key = "{file}"; lifetime = "1h"; }; },
  { id = "b"; after = ["a"]; command = ["true"]; } ); };
WF
start_serve
ok $? "serve listens"
for n in 1 2; do
    api POST /api/v1/runs '{"workflow": "conv", "context": {"file": "x.csv"}}' token
    run=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
    wait_status "$run" Completed
    ok $? "run $n completes"
    api GET "/api/v1/runs/$run/attempts"
    code_is 200 "its attempts"
    if [ "$n" = 1 ]; then
        jq_is '[["a", "Completed", false], ["b", "Completed", false]]' \
            '[[a["task"], a["outcome"], a["cached"]] for a in b["attempts"]]' "the first run's ran"
    else
        jq_is '[["a", "Completed", true], ["b", "Completed", false]]' \
            '[[a["task"], a["outcome"], a["cached"]] for a in b["attempts"]]' \
            "the second run's first task came from the cache"
        jq_is "completed from the cache: the output of run $((run - 1))" \
            '[a["detail"] for a in b["attempts"] if a["cached"]][0]' "with the cache's note"
    fi
done
stop_serve
ok $? "serve stops cleanly"
done_testing
cleanup_host
