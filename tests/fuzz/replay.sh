#!/bin/sh
# Replays every fuzz corpus (seeds and kept crashes) through its target,
# built without libFuzzer: one TAP line per target.  Under
# `make check-valgrind` each replay runs under $SY_WRAP.
corpus="$SY_SRCDIR/tests/fuzz/corpus"
# A leak inside libconfig itself is known and bounded: lsan.supp says which.
LSAN_OPTIONS="suppressions=$SY_SRCDIR/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS
targets="glob glob_diff config routes workflow definition cache context cron
duration params sigv4 admin slurm tokens kubernetes slot_counts"
n=0
for t in $targets; do n=$((n + 1)); done
echo "1..$n"
i=0
for t in $targets; do
    i=$((i + 1))
    # A target of an optional plugin is built only with the plugin.
    if [ ! -x "$SY_BUILDDIR/tests/fuzz/replay_$t" ] && [ "$t" = kubernetes ]; then
        echo "ok $i # SKIP fuzz corpus $t: the kubernetes plugin is not built"
        continue
    fi
    out=$($SY_WRAP "$SY_BUILDDIR/tests/fuzz/replay_$t" "$corpus/$t" 2>&1)
    rc=$?
    if [ $rc -eq 0 ]; then
        # libconfig's scanner echoes characters it cannot match to stdout
        # (flex's default rule), ahead of the count on its line.
        echo "ok $i - fuzz corpus $t: $(printf '%s\n' "$out" | tail -n 1 |
            sed 's/.*[^0-9]\([0-9][0-9]* inputs replayed\)$/\1/')"
    else
        echo "not ok $i - fuzz corpus $t (exit $rc)"
        printf '%s\n' "$out" | tail -n 40 | sed 's/^/# /'
    fi
done
