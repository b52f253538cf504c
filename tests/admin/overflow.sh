#!/bin/sh
# Overflow lists over the admin API: GET /api/v1/routes explains a
# namespace with every instance of its list, in order, lists the rules and
# the default with theirs, and `switchyard --host URL route` prints them as
# the local command does.
. "$SY_SRCDIR/tests/admin/lib.sh"
make_admin_host
sed -i 's|^executors = { default = { plugin = "thread"; workers = 4; }; };$|executors = { default = { plugin = "thread"; workers = 4; }; burst = { plugin = "thread"; workers = 2; }; };\nroutes = { default = ["default", "burst"]; rules = ( { match = "*::ml::**"; to = ["burst", "default"]; } ); };|' "$host/switchyard.cfg"
start_serve
ok $? "serve listens"
api GET '/api/v1/routes?namespace=public::ml::fit'
code_is 200 "a namespace explained"
jq_is '["burst", ["burst", "default"], ["burst", "default"]]' \
    '[b["executor"], b["executors"], b["tried"][0]["executors"]]' \
    "with the overflow list, in the order it is tried"
api GET /api/v1/routes
jq_is '[["burst", "default"], "default", ["default", "burst"]]' \
    '[b["rules"][0]["executors"], b["default"], b["defaults"]]' "the rules and the default, with their lists"
if [ -z "$SY_WRAP" ]; then
    run --host "$base" route public::etl::load
    case "$out" in *"needs libcurl"*) ok 0 "route --host # SKIP built without libcurl" ;; *)
        has "public::etl::load -> default, burst" "route --host prints the serving host's list"
        has "overflow: a task goes to the first of default, burst with capacity" "and what it means"
        run --host "$base" route public::ml::fit --quiet
        [ "$out" = "$(printf 'burst\ndefault')" ]
        ok $? "route --host --quiet: one instance a line" ;;
    esac
fi
stop_serve
ok $? "serve stops cleanly"
cleanup_host
done_testing
