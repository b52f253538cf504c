#!/bin/sh
# `switchyard --host URL`: status, runs, submit, cancel, retry, logs,
# workflows and route over a serving host's admin API, never opening a store here (the
# config named does not even exist); the token from --token-file or
# $SWITCHYARD_TOKEN_FILE.
. "$SY_SRCDIR/tests/admin/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP a dozen commands against a serving host under valgrind"
    exit 0
fi
run --host http://127.0.0.1:1 status 1
case "$out" in *"needs libcurl"*)
    echo "1..0 # SKIP built without libcurl (--host says so)"
    exit 0 ;;
esac
make_admin_host
workflow w <<'WF'
workflow = { name = "w"; tasks = ( { id = "a"; command = ["sh", "-c", "echo said-a >&2"]; },
                                    { id = "b"; after = ["a"]; command = ["true"]; } ); };
WF
workflow slow <<'WF'
workflow = { name = "slow"; tasks = ( { id = "a"; command = ["sleep", "30"]; } ); };
WF
workflow flaky <<WF
workflow = { name = "flaky"; tasks = (
  { id = "t"; command = ["sh", "-c", "test -f $host/flag || { touch $host/flag; exit 3; }"]; }
); };
WF
start_serve
ok $? "serve listens"
served=$SWITCHYARD_CONFIG
SWITCHYARD_CONFIG=$host/nowhere.cfg
export SWITCHYARD_CONFIG
remote() { run --host "$base" "$@"; }

remote submit w --context '{"k": 1}'
rc_is 1 "submit without a token is refused"
has "give --token-file FILE or SWITCHYARD_TOKEN_FILE" "saying how to give one"
remote submit w --token-file "$host/token"
rc_is 2 "--token-file is a global option: not after the command"
run --host "$base" --token-file "$host/token" submit w --context '{"k": 1}' --priority 4
rc_is 0 "submit with --token-file"
id=$(printf '%s\n' "$out" | tail -n1)
[ "$id" = 1 ]
ok $? "prints the run id"
SWITCHYARD_TOKEN_FILE=$host/token
export SWITCHYARD_TOKEN_FILE
for _ in $(seq 1 100); do
    remote status "$id" --json
    case "$out" in *'"status": "Completed",'*'"error"'*) break ;; esac
    sleep 0.1
done
remote status "$id"
rc_is 0 "status"
has "Completed" "shows the run"
remote status "$id" --json
has '"namespace": "public::w::a"' "status --json"
has '"priority": 4' "with the priority --priority sent"
remote status "$id" --task a
has "task public::w::a" "status --task"
remote runs
rc_is 0 "runs"
has "public::w" "lists the run"
remote runs --json --limit 1
has '"run_id": 1' "runs --json --limit"
remote logs "$id"
rc_is 0 "logs"
has "said-a" "shows what the attempt wrote"

remote submit slow
sid=$(printf '%s\n' "$out" | tail -n1)
for _ in $(seq 1 100); do
    remote status "$sid" --json
    case "$out" in *'"status": "Running"'*) break ;; esac
    sleep 0.1
done
remote cancel "$sid"
rc_is 0 "cancel"
has "cancel requested" "a request the serving host carries out"
remote logs "$sid" --follow
rc_is 0 "logs --follow ends with the run"
remote status "$sid"
has "Cancelled" "the run was cancelled"
remote cancel "$sid"
rc_is 1 "cancel of an ended run fails"

SWITCHYARD_TOKEN_FILE=$host/token remote submit flaky
fid=$(printf '%s\n' "$out" | tail -n1)
for _ in $(seq 1 100); do
    remote status "$fid" --json
    case "$out" in *'"status": "Failed",'*'"error"'*) break ;; esac
    sleep 0.1
done
remote retry "$fid" --dry-run --json
rc_is 0 "retry --dry-run --json"
has '"rerun"' "prints the plan"
remote retry "$fid" --no-cache
rc_is 0 "retry (--no-cache goes in the API's body, which takes it)"
has "Pending, for the host at $base to take" "leaves the run to the serving host"
remote logs "$fid" --follow --json
rc_is 0 "logs --follow --json until it ends"
remote status "$fid"
has "Completed" "which runs it again to completion"

remote workflows
rc_is 0 "workflows"
has "public::flaky" "lists the serving host's workflows"
remote workflows --json
hasnt '"dag"' "workflows --json in its usual shape"
remote route public::w::a --quiet
[ "$out" = default ]
ok $? "route --quiet: the instance the serving host's routes name"
remote route public::w::a
has "public::w::a -> default" "route explains it"

remote graph w
rc_is 2 "a command that runs here only refuses --host"
has "emit" "its error lists the commands that do run over --host, emit among them"
run --host ftp://x status 1
rc_is 2 "a URL that is neither http:// nor unix: is a usage error"
stop_serve
ok $? "serve stops cleanly"
remote status 1
rc_is 1 "a host that does not answer is an error"
chmod 0644 "$host/token"
remote submit w
rc_is 2 "a token file others can read is refused here too"
has "mode 0644" "saying why"
SWITCHYARD_CONFIG=$served
cleanup_host
done_testing
