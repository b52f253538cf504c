#!/bin/sh
# The conformance kit (switchyard-conformance): correct plugins pass it;
# each broken test plugin fails the one check for the rule it breaks, for
# the right reason; the template passes it unchanged; and a plugin built
# against the frozen ABI 1.0 header (tests/abi/) passes on this host, so an
# incompatible change to api/ fails here.
. "$SY_SRCDIR/tests/cli/tap.sh"

builddir=$(dirname "$SWITCHYARD")
KIT=${SY_CONFORMANCE:-$builddir/switchyard-conformance}
if [ -n "$SY_WRAP" ]; then
    # valgrind runs everything ten to fifty times slower.
    SWITCHYARD_CONFORMANCE_TIME_SCALE=${SWITCHYARD_CONFORMANCE_TIME_SCALE:-10}
    export SWITCHYARD_CONFORMANCE_TIME_SCALE
fi

# Every check passes but resume, skipped (the template has none); under
# valgrind `memory` is skipped too (valgrind's own memory follows the
# program's, and its leak check judges instead).
all_passed="22 passed, 0 failed (1 skipped)"
if [ -n "$SY_WRAP" ]; then all_passed="21 passed, 0 failed (2 skipped)"; fi

# kit ARGS...: runs the kit (under $SY_WRAP), sets $out and $rc.
kit() {
    out=$($SY_WRAP "$KIT" "$@" 2>&1)
    rc=$?
}

# The broken plugins are judged on their verdicts alone: without $SY_WRAP
# and its time scale, their waits for what never comes stay seconds.
kit_bare() {
    out=$(SWITCHYARD_CONFORMANCE_TIME_SCALE= "$KIT" "$@" 2>&1)
    rc=$?
}

# only_fails CHECK NAME: exactly one FAIL line, and it is CHECK's.
only_fails() {
    fails=$(printf '%s\n' "$out" | grep -c '^FAIL ')
    first=$(printf '%s\n' "$out" | grep '^FAIL ' | head -n 1)
    case "$fails:$first" in
    "1:FAIL $1:"*) ok 0 "$2" ;;
    *) echo "# expected one FAIL line, for $1; got $fails"; ok 1 "$2" ;;
    esac
}

dir=$(plugin_dir good noentry broken_twice broken_never broken_blocks \
    broken_capacity broken_badparams broken_late broken_cancel_late \
    broken_after_destroy broken_destroy_thread broken_cancel_blocks broken_fds broken_threads \
    broken_memory broken_oversize broken_result_size \
    broken_result_size_zero broken_defer_negative broken_spec_size \
    broken_input broken_shared_result deferring resuming broken_resume \
    broken_slow_submit broken_slow_cancel broken_long_error broken_oversize_100)
for so in "$builddir/sdk/template/.libs/template.so" \
    "$builddir/tests/abi/.libs/plugin_1_0.so"; do
    cp "$so" "$dir/" && chmod 0755 "$dir/$(basename "$so")"
done

# --- usage ------------------------------------------------------------------
kit_bare
rc_is 2 "no plugin is a usage error"
has "usage: switchyard-conformance PLUGIN.so" "with the usage line"

kit_bare --list
rc_is 0 "--list exits 0"
has "cancel-running" "and names the checks"
for c in cancel-blocking late-completion output-size input fd-leak \
    thread-leak memory; do
    has "$c " "--list names $c"
done

printf 'instance = { workers = 2; };\ntaks = { sleep_ms = 1; };\n' >"$dir/typo.cfg"
kit_bare "$dir/template.so" --params "$dir/typo.cfg"
rc_is 2 "a params file with an unknown key is refused"
has "$dir/typo.cfg:2: unknown key 'taks'" "naming the file and line"

printf 'instance = { workers = 2 ;\n' >"$dir/syntax.cfg"
kit_bare "$dir/template.so" --params "$dir/syntax.cfg"
rc_is 2 "a params file with a syntax error is refused"
has "$dir/syntax.cfg:" "naming the file"

kit_bare "$dir/template.so" --only nosuchcheck
rc_is 2 "an unknown check name is refused"

# --- correct plugins ----------------------------------------------------------
kit "$dir/good.so"
rc_is 0 "good.so passes the kit"
has "PASS concurrency" "it is completed exactly once under 8 threads"
has "PASS metrics" "its metrics agree with the kit's counts"
hasnt "FAIL" "no check fails"
has "0 failed" "the summary says so"

kit "$dir/good.so" --params /dev/null -v
rc_is 0 "an empty params file changes nothing"
has "PASS load: good 1.0.0, executor ABI 1.0" "--verbose says what loaded"

kit "$dir/template.so" --params "$SY_SRCDIR/sdk/template/conformance.cfg"
rc_is 0 "the template passes the kit with its params file"
has "$all_passed" "every check runs and passes"

kit "$dir/template.so" -v
rc_is 0 "the template passes the kit without a params file too"
has 'workers: must be an integer between 1 and 1024, got "not-an-integer"' \
    "bad-params gives each declared setting a wrong type; sdk.h explains it"

kit "$dir/template.so" --params "$SY_SRCDIR/sdk/template/conformance.cfg" \
    --only cancel-running,wake -v
has "4 ended CANCELLED" "running work is cancelled"
has "PASS wake: SY_EBUSY at 20 in flight" "wake() follows SY_EBUSY"

# --- ABI 1.1: DEFERRED --------------------------------------------------------
kit "$dir/deferring.so" -v
rc_is 0 "a plugin that defers every other task passes the kit"
has "PASS complete-once: 200 submits, each completed once" \
    "a DEFERRED completion is one valid completion"
has "100 deferred" "and is counted as deferred"
hasnt "FAIL" "no check fails"

# --- ABI 1.4: resume() ----------------------------------------------------------
kit "$dir/resuming.so" -v
rc_is 0 "a plugin with resume() passes the kit"
has "PASS resume: 10 resumes of attempts never started, each started and completed once" \
    "its resume() is checked, not skipped"
hasnt "FAIL" "no check fails"

kit_bare "$dir/broken_resume.so"
rc_is 1 "a resume() that refuses an attempt never started fails the kit"
has "FAIL resume: resume() of an attempt that was never started returned SY_ENOTSUP (resume is not supported after all)" \
    "in resume, saying so"
only_fails resume "and nothing else fails"

kit_bare "$dir/broken_defer_negative.so"
rc_is 1 "DEFERRED with a negative retry_after_ms fails the kit"
has "FAIL complete-once: 1 malformed result (first: task-1: DEFERRED with a negative retry_after_ms)" \
    "in complete-once, saying so"
only_fails complete-once "and nothing else fails"

printf 'max_context_bytes = 0;\n' >"$dir/maxctx.cfg"
kit_bare "$dir/deferring.so" --params "$dir/maxctx.cfg"
rc_is 2 "a max_context_bytes below 1 is refused"
has "must be a positive integer" "saying what it must be"

# --- ABI 1.0, frozen ----------------------------------------------------------
cat >"$dir/abi.cfg" <<'EOF'
instance = { slots = 6; label = "frozen"; tags = ["a", "b"]; weights = [1, 2];
             ratio = 0.5; verbose = true; extra = { x = 1; y = "z"; }; };
task = { hold = "1ms"; };
long_task = { hold = "10m"; };
bad_task = { hold = "soon"; };
input = "{\"from\": \"abi-1.0\"}";
EOF
kit "$dir/plugin_1_0.so" --params "$dir/abi.cfg" -v
rc_is 0 "a plugin built against the frozen 1.0 header passes on this host"
has "PASS load: abi_1_0 1.0.0, executor ABI 1.0" "it loads as ABI 1.0"
has "PASS complete-once: 200 submits" "its tasks run (every sy_task field made sense)"
has "$all_passed" "every check runs and passes"

# --- broken plugins: each fails its rule's check, for its reason ------------------
kit_bare "$dir/broken_twice.so"
rc_is 1 "completing twice fails the kit"
has "FAIL complete-once: complete() called twice" "in complete-once, saying so"
only_fails complete-once "and nothing else fails"

kit_bare "$dir/broken_never.so"
rc_is 1 "never completing fails the kit"
has "FAIL complete-once: 200 of 200 accepted submits never completed" \
    "in complete-once, saying so"
only_fails complete-once "and nothing else fails"

kit_bare "$dir/broken_blocks.so"
rc_is 1 "blocking in submit() fails the kit"
has "FAIL nonblocking: submit() blocks" "in nonblocking, saying so"
# The plugin sleeps 200 ms a call: the slowest is at least that (more on
# a loaded machine or under valgrind, so no upper bound).
slowest=$(printf '%s\n' "$out" | sed -n 's/.*(max \([0-9][0-9]*\)\.[0-9] ms).*/\1/p' | head -n1)
[ -n "$slowest" ] && [ "$slowest" -ge 200 ]
ok $? "with the slowest call's time (max $slowest ms)"
only_fails nonblocking "and nothing else fails"

kit_bare "$dir/broken_capacity.so"
rc_is 1 "accepting more than capacity() fails the kit"
has "FAIL capacity: " "in capacity"
has "in flight at once, but capacity() never answered more than 2" \
    "saying how many were in flight against what was promised"
only_fails capacity "and nothing else fails"
has "PASS concurrency" "its completions are still exactly once"

kit_bare "$dir/broken_badparams.so"
rc_is 1 "crashing on bad settings fails the kit"
has "FAIL bad-params: crashed" "in bad-params, as a crash"
only_fails bad-params "and nothing else fails: the crash stayed in its child"
has "PASS destroy" "later checks still run"

kit_bare "$dir/broken_cancel_blocks.so"
rc_is 1 "blocking in cancel() fails the kit"
has "FAIL cancel-blocking: cancel() blocks: 2 calls took longer than 50 ms" \
    "in cancel-blocking, saying so"
# The plugin sleeps 200 ms; a loaded machine only adds to it.
slowest=$(printf '%s\n' "$out" | sed -n 's/^FAIL cancel-blocking:.*(max \([0-9]*\).*/\1/p')
[ "${slowest:-0}" -ge 200 ]
ok $? "with the slowest call's time (${slowest:-none} ms)"
only_fails cancel-blocking "and nothing else fails"
has "SKIP cancel-queued: needs cancel-blocking" "the cancel checks wait for it"

kit_bare "$dir/broken_late.so"
rc_is 1 "completing again once the instance is idle fails the kit"
has "FAIL late-completion: complete() called again after the task ended: 1 late call" \
    "in late-completion, saying so"
only_fails late-completion "and nothing else fails"

kit_bare "$dir/broken_cancel_late.so"
rc_is 1 "completing after cancel() said SY_ENOENT fails the kit"
has "FAIL late-completion: complete() called after cancel() returned SY_ENOENT" \
    "in late-completion, saying so"
only_fails late-completion "and nothing else fails"

kit_bare "$dir/broken_after_destroy.so"
rc_is 1 "completing after destroy() returned fails the kit"
has "FAIL destroy: complete() called after destroy() returned: 1 call" \
    "in destroy, saying so"
has "from a thread destroy() left running" "and why it could"
only_fails destroy "and nothing else fails"

# The kit's baseline is taken after one idle instance came and went (a
# library may keep a thread for the process); a thread left per instance
# still fails.
kit_bare "$dir/broken_destroy_thread.so"
rc_is 1 "a thread destroy() leaves behind per instance fails the kit"
has "FAIL destroy: 1 thread still running after destroy() after work" "in destroy, saying so"
only_fails destroy "and nothing else fails"

kit_bare "$dir/broken_fds.so"
rc_is 1 "a file descriptor kept per task fails the kit"
has "FAIL fd-leak: " "in fd-leak"
has "file descriptors more after" "saying how many"
has "tasks (1.00 per task)" "and how many per task"
only_fails fd-leak "and nothing else fails"

kit_bare "$dir/broken_threads.so"
rc_is 1 "a thread kept per task fails the kit"
has "FAIL thread-leak: " "in thread-leak"
has "threads more after" "saying how many"
has "tasks (1.00 per task)" "and how many per task"
only_fails thread-leak "and nothing else fails"
has "SKIP destroy: needs thread-leak, which failed" \
    "destroy, which would see the same threads, waits for it"

kit_bare "$dir/broken_memory.so"
rc_is 1 "64 KiB kept per task fails the kit"
has "FAIL memory: memory grew by" "in memory"
has "(64." "saying how much per task"
only_fails memory "and nothing else fails"

kit_bare "$dir/broken_oversize.so"
rc_is 1 "an output over max_context_bytes fails the kit"
has "FAIL output-size: " "in output-size"
has "outputs over max_context_bytes (16777216 bytes; first: task-0, 17825792 bytes)" \
    "saying by how much"
only_fails output-size "and nothing else fails"

printf 'max_context_bytes = 33554432;\n' >"$dir/bigctx.cfg"
kit_bare "$dir/broken_oversize.so" --params "$dir/bigctx.cfg" --only output-size
rc_is 0 "max_context_bytes in --params raises the bound"

# The bounds the host enforces (switchyard/limits.h), each once over.
kit_bare "$dir/broken_oversize_100.so" --only output-size
rc_is 1 "a 100 MiB output fails the kit"
has "outputs over max_context_bytes (16777216 bytes; first: task-0, 104857600 bytes)" \
    "with its size and the bound"

kit_bare "$dir/broken_long_error.so"
rc_is 1 "a 100 KiB error text fails the kit"
has "FAIL output-size: " "in output-size"
has "error texts over the host's bound (65536 bytes, SY_RESULT_ERROR_MAX; first: task-0, 102400 bytes)" \
    "with its size and the bound"
only_fails output-size "and nothing else fails"

kit_bare "$dir/broken_slow_submit.so"
rc_is 1 "one submit() past the host's bound fails the kit"
has "FAIL nonblocking: submit() of task-0 took 1" "in nonblocking, naming the call"
has "ms, over the host's bound of 1000 ms" "with the bound the watchdog enforces"
only_fails nonblocking "and nothing else fails"

kit_bare "$dir/broken_slow_cancel.so" --only cancel-blocking
rc_is 1 "one cancel() past the host's bound fails the kit"
has "FAIL cancel-blocking: cancel() of task-" "in cancel-blocking, naming the call"
has "ms, over the host's bound of 1000 ms" "with the bound the watchdog enforces"

kit_bare "$dir/broken_result_size.so"
rc_is 1 "a garbage sy_result.size fails the kit"
has "FAIL complete-once: 1 malformed result (first: task-0: sy_result.size is 12648430, not the size of any sy_result layout" \
    "in complete-once, saying so"
only_fails complete-once "and nothing else fails"

kit_bare "$dir/broken_result_size_zero.so"
rc_is 1 "a sy_result.size of 0 fails the kit"
has "FAIL complete-once: 1 malformed result (first: task-0: sy_result.size is 0, smaller than a 1.0 sy_result (32 bytes)" \
    "in complete-once, saying so"
only_fails complete-once "and nothing else fails"

kit_bare "$dir/broken_spec_size.so"
rc_is 1 "a garbage sy_param_spec.size fails the kit"
has "FAIL descriptor: instance_params[0]: size 2147418113 is not the size of any sy_param_spec layout" \
    "in descriptor, saying so"
only_fails descriptor "and nothing else fails"

kit_bare "$dir/broken_input.so"
rc_is 1 "writing into the task's input fails the kit"
has "FAIL input: wrote to the task's input (byte 1 of 2)" \
    "in input, saying where"
only_fails input "and nothing else fails: other checks hand out writable input"

kit_bare "$dir/broken_shared_result.so"
rc_is 1 "a result written by another thread during complete() fails the kit"
has "FAIL result-stable: " "in result-stable"
has "changed before complete() returned, so a task can get another task's output: task " \
    "saying what it costs and naming a task"
only_fails result-stable "and nothing else fails"

kit_bare "$dir/noentry.so"
rc_is 1 "a plugin the host refuses fails the kit"
has "FAIL load: the host refuses it: no sy_executor_entry symbol" \
    "with the loader's reason"
has "SKIP create: needs load, which failed" "and the rest is skipped"

kit_bare "$dir/absent.so"
rc_is 1 "a missing file fails the kit"
has "FAIL load: the host refuses it: cannot resolve path" "saying so"

# --- the kit refuses what the host refuses, in the host's words ---------------
# One loader (switchyard/loader.h) serves both.  same_refusal PLUGIN KEY NAME:
# the kit fails PLUGIN's load check for a reason holding KEY, and
# `switchyard plugins` refuses it with that very line.
same_refusal() {
    one=$(plugin_dir "$1")
    kit_bare "$one/$1.so" --only load
    rc_is 1 "$3 fails the kit"
    has "FAIL load: the host refuses it: $2" "in load, for its reason"
    why=$(printf '%s\n' "$out" | sed -n 's/^FAIL load: the host refuses it: //p')
    out=$(cd "$one" && SWITCHYARD_PLUGIN_PATH=$one $SY_WRAP "$SWITCHYARD" \
        plugins 2>&1)
    case "$why:$out" in
    ?*:*"refused: $why"*) ok 0 "and the host refuses it with the same line" ;;
    *) echo "# the host's listing lacks: refused: $why"
       ok 1 "and the host refuses it with the same line" ;;
    esac
    rm -rf "$one"
}

SY_TEST_ODD_HEADER=old; export SY_TEST_ODD_HEADER
same_refusal oddheader "descriptor size 1 is too small for any sy_executor" \
    "a descriptor of the pre-1.0 layout"
SY_TEST_ODD_HEADER=huge
same_refusal oddheader "descriptor size 2147483647 is implausible" \
    "an implausible descriptor size"
SY_TEST_ODD_HEADER=reserved
same_refusal oddheader "sets the reserved descriptor field" \
    "a descriptor that sets reserved"
unset SY_TEST_ODD_HEADER
same_refusal abi16_field "sets descriptor fields past this host's executor ABI" \
    "a descriptor setting fields past this layout"
same_refusal abi16_minor "needs executor ABI 1.6, newer than this host's 1.5" \
    "a plugin needing a newer minor"
same_refusal abi2 "built for executor ABI 2.0" "a plugin of another major"
same_refusal small "descriptor too small" "a descriptor smaller than 1.0's"

cd / && rm -rf "$dir"
done_testing
