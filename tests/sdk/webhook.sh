#!/bin/sh
# The webhook example (examples/webhook-executor/) builds out of tree with
# its own Makefile against the SDK installed into $SY_SDK_PREFIX, and
# passes the conformance kit against a loopback HTTP responder
# (tests/sdk/webhook_server.py).  Skipped when SY_SDK_PREFIX is not set.
. "$SY_SRCDIR/tests/cli/tap.sh"

if [ -z "${SY_SDK_PREFIX:-}" ]; then
    echo "1..0 # SKIP SY_SDK_PREFIX is not set (install the SDK into a prefix first)"
    exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "1..0 # SKIP python3 is not installed (apt-get install python3)"
    exit 0
fi

builddir=$(dirname "$SWITCHYARD")
KIT=$SY_SDK_PREFIX/bin/switchyard-conformance
[ -x "$KIT" ] || KIT=$builddir/switchyard-conformance
if [ -n "$SY_WRAP" ]; then
    SWITCHYARD_CONFORMANCE_TIME_SCALE=${SWITCHYARD_CONFORMANCE_TIME_SCALE:-10}
    export SWITCHYARD_CONFORMANCE_TIME_SCALE
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sy-webhook-XXXXXX") || exit 1
chmod 0700 "$tmp"
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null
    cd / && rm -rf "$tmp"
}
trap cleanup EXIT

# --- the installed SDK --------------------------------------------------------
pc=$(find "$SY_SDK_PREFIX" -name switchyard-sdk.pc 2>/dev/null | head -n 1)
[ -n "$pc" ]
ok $? "switchyard-sdk.pc is installed under the prefix"
PKG_CONFIG_PATH=$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
# The prefix was configured for another place (make install DESTDIR=...):
# let pkg-config derive it from where the .pc file lies.
PKG_CONFIG="pkg-config --define-prefix"

incdir=$($PKG_CONFIG --variable=includedir switchyard-sdk)
for h in executor.h sdk.h; do
    [ -f "$incdir/switchyard/$h" ]
    ok $? "switchyard/$h is installed"
done
plugindir=$($PKG_CONFIG --variable=plugindir switchyard-sdk)
case "$plugindir" in
"$SY_SDK_PREFIX"/*) ok 0 "plugindir is inside the prefix" ;;
*) echo "# plugindir: $plugindir"; ok 1 "plugindir is inside the prefix" ;;
esac

# --- build out of tree, with the example's own Makefile ---------------------------
cp -R "$SY_SRCDIR/examples/webhook-executor" "$tmp/src"
chmod -R u+w "$tmp/src"
out=$(make -C "$tmp/src" PKG_CONFIG="$PKG_CONFIG" 2>&1)
ok $? "the example builds with its Makefile against the installed SDK"
chmod 0755 "$tmp/src/webhook.so" 2>/dev/null
has "$incdir" "its compile line comes from pkg-config"
out=$(make -C "$tmp/src" PKG_CONFIG="$PKG_CONFIG" DESTDIR="$tmp/dest" install 2>&1)
ok $? "make install works"
[ -x "$tmp/dest$plugindir/webhook.so" ]
ok $? "and puts webhook.so into the plugin directory"

# --- a loopback responder ---------------------------------------------------------
python3 "$SY_SRCDIR/tests/sdk/webhook_server.py" "$tmp/port" &
server=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
done
port=$(cat "$tmp/port" 2>/dev/null)
[ -n "$port" ]
ok $? "the test responder listens on 127.0.0.1"
url="http://127.0.0.1:$port"

# Every check passes; under valgrind `memory` is skipped (valgrind's own
# memory follows the program's, and its leak check judges instead).
all_passed="22 passed, 0 failed (1 skipped)"
if [ -n "$SY_WRAP" ]; then all_passed="21 passed, 0 failed (2 skipped)"; fi

# kit PARAMS-TEXT ARGS...: writes the params file, runs the kit.
kit() {
    printf '%s\n' "$1" >"$tmp/params.cfg"
    shift
    out=$($SY_WRAP "$KIT" "$tmp/src/webhook.so" --params "$tmp/params.cfg" "$@" 2>&1)
    rc=$?
}

# --- the kit ------------------------------------------------------------------------
kit "instance = { url = \"$url\"; max_in_flight = 8; timeout = \"5s\"; };
task = { path = \"/echo\"; };
long_task = { path = \"/slow?ms=600000\"; };
bad_instance = { url = \"ftp://nowhere\"; };
bad_task = { path = \"no-slash\"; };"
rc_is 0 "the webhook executor passes the conformance kit"
has "$all_passed" "every check runs and passes"

# --- what each reply becomes (the kit's notes count the outcomes) -------------------
kit "instance = { url = \"$url\"; }; task = { path = \"/echo\"; };" \
    --only complete-once -v
has "submits, each completed once" "echoed JSON replies complete once"
has "outcomes: " "and are counted"
hasnt " 0 succeeded" "as succeeded"

kit "instance = { url = \"$url\"; }; task = { path = \"/status/503\"; };" \
    --only complete-once -v
has " 0 succeeded" "a 503 reply does not succeed"
has "first error: failed: HTTP 503 from $url/status/503: boom 503" \
    "it fails with the status and the body"

kit "instance = { url = \"$url\"; }; task = { path = \"/text\"; };" \
    --only complete-once -v
has "the reply is not a JSON object: this is not json" \
    "a 2xx reply that is not a JSON object fails"

kit "instance = { url = \"$url\"; max_in_flight = 16; };
task = { path = \"/slow?ms=5000\"; timeout = \"100ms\"; };" --only complete-once -v
has "first error: timed_out: no reply from $url/slow?ms=5000 within 100ms" \
    "no reply within the task's timeout is TIMED_OUT"

kit "instance = { url = \"http://127.0.0.1:1\"; };" --only complete-once -v
has "first error: failed: POST http://127.0.0.1:1 failed:" \
    "a refused connection fails, with curl's reason"

kit "instance = { max_in_flight = 2; };" --only create
rc_is 1 "an instance without url is refused"
has "params.cfg:1: error: instance: missing required key 'url'" \
    "by its declarations, as the host would, with the file and line"

kit "instance = { url = \"$url\"; }; bad_instance = { max_in_flight = 2; };" \
    --only bad-params -v
rc_is 0 "create() itself refuses a missing url"
has "url: required, but not set" "saying which setting is missing"

done_testing
