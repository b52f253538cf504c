#!/bin/sh
# The dashboard's files over HTTP: `/` and `/dashboard/NAME` from
# admin.dashboard_dir with their Content-Type and cache headers, an ETag
# answered 304; no way out of the directory (.., encoded or not, hidden
# files, symbolic links); no directory: `/` is 404 with a line saying so
# while the API works; the page needs no token even where reads do; and
# the attempts the Gantt draws (GET /api/v1/runs/ID/attempts).
. "$SY_SRCDIR/tests/admin/lib.sh"
make_admin_host 'listen = "127.0.0.1:0"; token_file = "token"; dashboard_dir = "dash";'
cp -R "$SY_SRCDIR/dashboard" "$host/dash"
chmod -R u+w "$host/dash"
echo secret >"$host/outside.txt"
ln -s "$host/outside.txt" "$host/dash/link.txt"
echo hidden >"$host/dash/.hidden.txt"
workflow flaky <<WF
workflow = { name = "flaky"; tasks = (
  { id = "first"; command = ["true"]; },
  { id = "then"; after = ["first"]; retry = { attempts = 3; delay = "100ms"; };
    command = ["sh", "-c", "n=\$(cat $host/n 2>/dev/null || echo 0); echo \$((n + 1)) >$host/n; [ \$n -ge 2 ] || { echo not yet >&2; exit 3; }"]; }
); };
WF
start_serve
ok $? "serve listens"

api GET /
code_is 200 "/ is the dashboard"
has_header() {
    printf '%s' "$headers" | tr -d '\r' | grep -qi "^$1" 
    ok $? "$2"
}
has_header 'Content-Type: text/html; charset=utf-8' "as HTML"
case "$body" in *'<script type="module" src="/dashboard/app.js">'*) r=0 ;; *) r=1 ;; esac
ok $r "its index.html"
has_header 'Cache-Control: no-cache' "kept but revalidated"
has_header 'Content-Security-Policy: default-src .self.' "scripts from this listener only"
has_header 'X-Content-Type-Options: nosniff' "no sniffing"
etag=$(printf '%s' "$headers" | tr -d '\r' | sed -n 's/^ETag: //Ip')
code=$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$base/")
[ -n "$etag" ] && [ "$code" = 304 ]
ok $? "an unchanged file is 304 by its ETag"
api GET /dashboard/app.js
code_is 200 "a module"
has_header 'Content-Type: text/javascript' "as JavaScript"
api GET /dashboard/style.css
has_header 'Content-Type: text/css' "a style sheet as CSS"
code=$(curl -s -I -o /dev/null -w '%{http_code}' "$base/dashboard/dag.js")
[ "$code" = 200 ]
ok $? "HEAD"

for p in /dashboard/../switchyard.cfg /dashboard/..%2Fswitchyard.cfg /dashboard/%2e%2e \
    /dashboard/link.txt /dashboard/.hidden.txt /dashboard/ /dashboard/nope.js /index.html; do
    code=$(curl -s --path-as-is -o "$host/body" -w '%{http_code}' "$base$p")
    [ "$code" = 404 ] && ! grep -q secret "$host/body"
    ok $? "$p is 404"
done
api POST /dashboard/app.js '' token
code_is 405 "files are read only"

api GET /api/v1/runs/1/attempts
code_is 404 "attempts of no run: 404"
api POST /api/v1/runs '{"workflow": "flaky"}' token
run=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
wait_status "$run" Completed
ok $? "a run that retries twice completes"
api GET "/api/v1/runs/$run/attempts"
code_is 200 "its attempts"
jq_is '[["first", 1, "Completed", true], ["then", 1, "Failed", false], ["then", 2, "Failed", false], ["then", 3, "Completed", true]]' \
    '[[a["task"], a["attempt"], a["outcome"], a["start_known"]] for a in b["attempts"]]' \
    "each attempt with its outcome, the failed ones' starts not recorded"
jq_is true 'all(a["start"] <= a["end"] for a in b["attempts"]) and b["attempts"][2]["end"] <= b["attempts"][3]["start"]' \
    "in order, each starting before it ends"
jq_is true 'b["attempts"][2]["start"] == b["attempts"][1]["end"] and b["attempts"][1]["start"] == b["created"]' \
    "an unrecorded start is the previous attempt's end, or the run's creation"
jq_is 'command sh exited with status 3: not yet' 'b["attempts"][1]["detail"].split(";")[0]' \
    "the failed attempt's error"
stop_serve
ok $? "serve stops cleanly"

# No directory: the API works, / says what is missing.  A listener others
# can reach (plain HTTP, so admin.insecure): the page needs no token, the
# API does.
rm -rf "$host/dash"
sed -i 's/"127.0.0.1:0";/"0.0.0.0:0"; insecure = true;/' "$host/switchyard.cfg"
start_serve
ok $? "serve listens without the dashboard's directory"
base=$(printf '%s' "$base" | sed 's/0\.0\.0\.0/127.0.0.1/')
api GET /
code_is 404 "/ is 404"
case "$body" in *"the dashboard is not installed: $host/dash: No such file or directory"*) r=0 ;; *) r=1 ;; esac
ok $r "with a line naming the directory"
api GET /api/v1/health
code_is 401 "the API still answers, with the token on this listener"
api GET /api/v1/health '' token
code_is 200 "and with it, serves"
stop_serve
ok $? "serve stops cleanly"

sed -i 's|^admin = .*|admin = { dashboard_dir = 3; };|' "$host/switchyard.cfg"
run check
rc_is 1 "check refuses a dashboard_dir that is not a string"
has "switchyard.cfg:5: error: 'admin.dashboard_dir' must be a directory name" "naming the field and line"
cleanup_host

# make install puts every file of dashboard/ where serve looks by default.
installed="$SY_SDK_PREFIX/share/switchyard/dashboard"
[ "$(ls "$SY_SRCDIR/dashboard")" = "$(ls "$installed" 2>/dev/null)" ]
ok $? "make install installs every dashboard file"
done_testing
