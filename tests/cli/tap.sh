# Sourced by the command-line tests: a tiny TAP producer.
#   run ARGS...         runs switchyard (under $SY_WRAP), sets $out and $rc
#   ok COND-RC NAME     one TAP line
#   has TEXT NAME       $out contains TEXT
#   hasnt TEXT NAME     $out does not contain TEXT
#   rc_is N NAME        $rc equals N
#   done_testing        prints the plan; exits non-zero if any failed
tap_n=0
tap_failed=0
tap_runs=0 # commands run so far: what a cached reading is valid for
: "${SWITCHYARD:?SWITCHYARD must name the built program}"

run() {
    tap_runs=$((tap_runs + 1))
    out=$($SY_WRAP "$SWITCHYARD" "$@" 2>&1)
    rc=$?
}

ok() {
    tap_n=$((tap_n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $tap_n - $2"
    else
        echo "not ok $tap_n - $2"
        tap_failed=$((tap_failed + 1))
        printf '%s\n' "$out" | sed 's/^/#   /'
    fi
}

has() {
    case "$out" in *"$1"*) ok 0 "$2" ;; *) echo "# expected to find: $1"; ok 1 "$2" ;; esac
}

hasnt() {
    case "$out" in *"$1"*) echo "# expected not to find: $1"; ok 1 "$2" ;; *) ok 0 "$2" ;; esac
}

rc_is() {
    [ "$rc" -eq "$1" ]
    local r=$?
    [ $r -eq 0 ] || echo "# exit status $rc, expected $1"
    ok $r "$2"
}

# A scratch directory with copies of the named test plugins (mode 0755).
plugin_dir() {
    local d
    d=$(mktemp -d "${TMPDIR:-/tmp}/sy-cli-XXXXXX") || exit 1
    chmod 0700 "$d"
    for p in "$@"; do
        cp "$SY_TEST_PLUGIN_DIR/$p.so" "$d/$p.so" && chmod 0755 "$d/$p.so"
    done
    echo "$d"
}

done_testing() {
    echo "1..$tap_n"
    [ "$tap_failed" -eq 0 ]
}
