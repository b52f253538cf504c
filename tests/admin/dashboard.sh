#!/bin/sh
# The dashboard in a real headless browser (tests/admin/dashboard.py):
# a run seen completing live, a failed run opened, retried from the page
# with the token, seen completing; a run cancelled; with a read token no
# action button, with an operate token cancel that works; the events and
# triggers views and a task taken from the cache.  Keeps screenshots in
# the build tree: tests/admin/dashboard.png (the retried run),
# tests/admin/dashboard-failed.png (the failed one, its attempt opened)
# tests/admin/dashboard-events.png and dashboard-triggers.png (those views).  Needs Debian's chromium, chromium-driver and
# python3-selenium (scripts/test installs them); skipped without them, and
# under valgrind (a browser waiting on a host ten times slower proves
# nothing the sanitizer pass does not).
. "$SY_SRCDIR/tests/admin/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP a browser against a host under valgrind; the sanitizer pass runs it"
    exit 0
fi
missing=
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
command -v chromedriver >/dev/null 2>&1 || missing="$missing chromium-driver"
# Debian's python3-selenium is for Debian's python3, which another one on
# PATH (pyenv, a virtualenv) may hide.
py=
for p in python3 /usr/bin/python3; do
    if "$p" -c 'import selenium' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || missing="$missing python3-selenium"
if [ -n "$missing" ]; then
    echo "1..0 # SKIP not installed:$missing (apt-get install chromium chromium-driver python3-selenium)"
    exit 0
fi
make_admin_host "listen = \"127.0.0.1:0\"; token_file = \"token\"; tokens_file = \"tokens\"; dashboard_dir = \"$SY_SRCDIR/dashboard\";"
for r in read operate; do
    $SY_WRAP "$SWITCHYARD" token new --role $r --name "$r-page" >"$host/$r.token" 2>/dev/null
done
workflow steady <<'WF'
workflow = { name = "steady"; tasks = ( { id = "prepare"; command = ["true"]; },
  { id = "work"; after = ["prepare"]; command = ["sh", "-c", "echo working >&2; sleep 2"]; } ); };
WF
workflow slow <<'WF'
workflow = { name = "slow"; tasks = ( { id = "wait"; command = ["sleep", "30"]; } ); };
WF
# `then` fails until the test creates the flag, just before it clicks retry.
workflow flaky <<WF
workflow = { name = "flaky"; tasks = (
  { id = "first"; command = ["true"]; },
  { id = "then"; after = ["first"];
    command = ["sh", "-c", "test -f $host/flag || { echo not there yet >&2; exit 3; }; echo passed >&2"]; },
  { id = "last"; after = ["then"]; command = ["true"]; }
); };
WF
# Triggers and the cache (--events): an event fires `landed`, another is
# passed over; `both` waits on the second part of its AND; conv's `a` is
# taken from the cache by a second run with the same input.
workflow landed <<'WF'
workflow = { name = "landed";
  triggers = ( { name = "raw"; event = "file.landed";
                 when = ( { path = "bucket"; equals = "raw"; } ); } );
  tasks = ( { id = "a"; command = ["true"]; } ); };
WF
workflow both <<'WF'
workflow = { name = "both";
  triggers = ( { name = "and"; all = ( { event = "file.landed"; }, { event = "prices.ready"; } ); } );
  tasks = ( { id = "a"; command = ["true"]; } ); };
WF
workflow conv <<'WF'
workflow = { name = "conv"; tasks = (
  { id = "a"; command = ["sh", "-c", "echo '{\"rows\": 7}'"];
    cache = { key = "{file}"; lifetime = "1h"; }; },
  { id = "b"; after = ["a"]; command = ["true"]; }
); };
WF
# browser ARGS...: dashboard.py's checks as TAP lines.
browser() {
    timeout 120 "$py" "$SY_SRCDIR/tests/admin/dashboard.py" "$@" >"$host/browser.out" 2>&1
    local rc=$?
    while IFS= read -r line; do
        case "$line" in
        PASS"	"*) ok 0 "${line#PASS	}" ;;
        FAIL"	"*) ok 1 "${line#FAIL	}" ;;
        *) echo "# $line" ;;
        esac
    done <"$host/browser.out"
    [ $rc -eq 0 ] || echo "# dashboard.py exited with $rc"
    ok $rc "the browser script ends cleanly"
}

start_serve
ok $? "serve listens"
mkdir -p tests/admin
shot=$(pwd)/tests/admin/dashboard.png
rm -f "$shot" tests/admin/dashboard-failed.png
browser "$base" "$host/token" "$host/flag" "$shot"
browser --roles "$base" "$host/read.token" "$host/operate.token"
rm -f tests/admin/dashboard-events.png tests/admin/dashboard-triggers.png
browser --events "$base" "$host/token" "$(pwd)/tests/admin/dashboard-events.png"
stop_serve
ok $? "serve stops cleanly"

# A listener other machines reach (plain HTTP, so admin.insecure): the API
# needs the token for reads too.
sed -i 's/"127.0.0.1:0";/"0.0.0.0:0"; insecure = true;/' "$host/switchyard.cfg"
start_serve
ok $? "serve listens on 0.0.0.0"
base=$(printf '%s' "$base" | sed 's/0\.0\.0\.0/127.0.0.1/')
browser --remote "$base" "$host/token"
stop_serve
ok $? "serve stops cleanly"
cleanup_host
done_testing
