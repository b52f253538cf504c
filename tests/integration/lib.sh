# Sourced by the integration tests: a scratch host with the ctl test plugin,
# on its own SQLite store.
. "$SY_SRCDIR/tests/cli/tap.sh"

# Makes $host: a directory with switchyard.cfg, plugins/ctl.so and
# workflows/; extra config lines may be given as $1.
make_host() {
    host=$(mktemp -d "${TMPDIR:-/tmp}/sy-int-XXXXXX") || exit 1
    chmod 0700 "$host"
    mkdir -p "$host/plugins" "$host/workflows"
    cp "$SY_TEST_PLUGIN_DIR/ctl.so" "$host/plugins/ctl.so" && chmod 0755 "$host/plugins/ctl.so"
    cat >"$host/switchyard.cfg" <<CFG
store = "sqlite:var/switchyard.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
executors = {
  default = { plugin = "ctl"; slots = 4; record = "$host/dispatch.log"; };
};
${1:-}
CFG
    SWITCHYARD_CONFIG="$host/switchyard.cfg"
    export SWITCHYARD_CONFIG
}

# workflow NAME <<EOF ... : writes workflows/NAME.cfg from stdin.
workflow() { cat >"$host/workflows/$1.cfg"; }

# jget RUN_ID EXPR: evaluates a Python expression on `status --json`
# (bound to `r`; `t` maps task ids to their entries).  A script whose
# commands all go through `run` (none in the background, none of its own)
# sets jget_cache=1: the run's status is then read once per command run,
# not once per assertion, which under valgrind was most of such a script.
jget_cached=
jget() {
    jget_status "$1" || return 1
    python3 - "$host/status.json" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = {x["id"]: x for x in r["tasks"]}
v = eval(sys.argv[2])
print(json.dumps(v, sort_keys=True) if not isinstance(v, str) else v)
PY
}

# jget_status RUN_ID: `status --json` into $host/status.json, unless
# jget_cache holds it from since the last command.  `is` calls it before
# `$(jget ...)`: what the subshell of a command substitution reads is
# forgotten when it ends, so the cache must be filled in the script's own
# shell.
jget_status() {
    if [ -z "${jget_cache:-}" ] || [ "$jget_cached" != "$1:$tap_runs" ]; then
        jget_cached=
        $SY_WRAP "$SWITCHYARD" status "$1" --json >"$host/status.json" 2>"$host/status.err" || {
            cat "$host/status.err" >&2
            return 1
        }
        jget_cached="$1:$tap_runs"
    fi
}

# is EXPECTED RUN_ID EXPR NAME
is() {
    local got
    [ -z "${jget_cache:-}" ] || jget_status "$2"
    got=$(jget "$2" "$3")
    if [ "$got" = "$1" ]; then ok 0 "$4"; else echo "# $3: got '$got', expected '$1'"; ok 1 "$4"; fi
}

# The run id printed by `run` ("run N: ...") or `submit` (N).
run_id() { printf '%s\n' "$out" | sed -n 's/^run \([0-9]*\):.*/\1/p; s/^\([0-9][0-9]*\)$/\1/p' | head -n1; }

cleanup_host() { rm -rf "$host"; }

# pg_host SETTINGS: make_host SETTINGS with a throwaway PostgreSQL server
# (tests/bin/pg-throwaway) of its own, stopped when the script exits; its
# URL in $url.  Skips the script when there are no server binaries.
pg_host() {
    make_host "$1"
    url=$("$SY_SRCDIR/tests/bin/pg-throwaway" start "$host")
    case $? in
    0) ;;
    77) echo "1..0 # SKIP no PostgreSQL server binaries (apt-get install postgresql-15)"; exit 0 ;;
    *) echo "Bail out! the throwaway PostgreSQL server did not start"; exit 1 ;;
    esac
    trap stop_pg EXIT
}
stop_pg() { "$SY_SRCDIR/tests/bin/pg-throwaway" stop "$host"; }

# pg_store_host SETTINGS: pg_host SETTINGS with the host's store on that
# server, migrated, the working directory the host's and psql in $PSQL;
# skips the script when there is no psql or the build has no PostgreSQL
# store.
pg_store_host() {
    pg_host "$1"
    PSQL=$(ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | tail -n1)
    if [ -z "$PSQL" ]; then
        echo "1..0 # SKIP no psql to read the store"
        exit 0
    fi
    sed -i "s|sqlite:var/switchyard.db|$url|" "$host/switchyard.cfg"
    cd "$host" || exit 1
    out=$("$SWITCHYARD" migrate 2>&1)
    case $out in
    *"not in this build"*)
        echo "1..0 # SKIP this build has no PostgreSQL store (configure found no libpq)"
        exit 0 ;;
    esac
}
