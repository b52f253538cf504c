#!/bin/sh
# Help for every command, and numbers on the command line checked.
. "$SY_SRCDIR/tests/cli/tap.sh"
# Constant usage texts and numbers refused before anything opens: under
# valgrind it was 40 s of CPU for what tests/config/test_integers (the
# number parser) and the scripts that run commands with options already
# check there (docs/testing.md), so the valgrind pass (the tarball's
# check) runs the program bare.
SY_WRAP=

run help
rc_is 0 "switchyard help exits 0"
has "usage: switchyard [--config FILE] COMMAND [ARGS]" "and prints the usage"
commands=$(printf '%s\n' "$out" | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p')
[ "$(printf '%s\n' "$commands" | wc -l)" -ge 12 ]
ok $? "it lists every command"

for c in $commands; do
    run "$c" --help
    rc_is 0 "switchyard $c --help exits 0"
    has "usage: switchyard [--config FILE] $c" "switchyard $c --help prints its usage"
    help_out=$out
    # The same text by another path.
    out=$("$SWITCHYARD" help "$c" 2>&1)
    [ "$out" = "$help_out" ]
    ok $? "switchyard help $c prints the same"
done

run run --help
hasnt "unexpected argument" "run --help is help, not an error"
has "--context JSON|@FILE" "run's help names its options"
run runs -h
has "--limit N" "-h works too"

run help nosuch
rc_is 2 "help of an unknown command is a usage error"
has "switchyard: help: no command 'nosuch'" "naming it"
run nosuch
rc_is 2 "an unknown command is a usage error"

# Numbers: each bad one an error naming the option, before anything opens.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sy-cli-XXXXXX")
printf 'store = "sqlite:db/sy.db";\n' >"$tmp/switchyard.cfg"
for bad in abc -3 0 99999999999999999999999 12x " 5" +5 0x10; do
    run --config "$tmp/switchyard.cfg" runs --limit "$bad"
    rc_is 2 "runs --limit '$bad' is a usage error"
    has "switchyard: runs: --limit '$bad': expected a whole number from 1 to 1000000000" \
        "naming the option and the value '$bad'"
done
run --config "$tmp/switchyard.cfg" runs --limit
rc_is 2 "runs --limit without a value is a usage error"
has "--limit needs a value" "saying so"
[ ! -e "$tmp/db" ]
ok $? "a bad number opens no store"
run --config "$tmp/switchyard.cfg" runs --limit 5
rc_is 0 "runs --limit 5 is fine"
run --config "$tmp/switchyard.cfg" status 99999999999999999999
rc_is 2 "a run id that overflows is a usage error"
has "expected a run id (a positive number), got '99999999999999999999'" "naming it"
run --config "$tmp/switchyard.cfg" status -1
rc_is 2 "a negative run id is a usage error"
has "got '-1'" "naming it"
run --config "$tmp/switchyard.cfg" run wf --progress-every soon
rc_is 2 "run --progress-every soon is a usage error"
has "switchyard: run: --progress-every 'soon': expected a whole number from 0 to 86400" \
    "naming the option"

rm -rf "$tmp"
done_testing
