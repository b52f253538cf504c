#!/bin/sh
# The manual pages: clean under `mandoc -T lint`, and true to the program:
# every command, every option of every command's help, and every key the
# program knows (as its own "known:" lists give them) appear in them.
. "$SY_SRCDIR/tests/cli/tap.sh"
# The pages against the program's own words: nothing here is about
# memory, and the same runs under valgrind took two minutes of CI, so the
# valgrind pass (the tarball's check) runs the program bare.
SY_WRAP=
man="$SY_SRCDIR/man"
pages="switchyard.1 switchyard.cfg.5 switchyard-workflow.5 switchyard-executor.3"

if command -v mandoc >/dev/null 2>&1; then
    for p in $pages; do
        out=$(mandoc -T lint -W warning "$man/$p" 2>&1)
        rc=$?
        rc_is 0 "mandoc -T lint finds nothing to warn about in $p"
    done
else
    echo "# SKIP mandoc -T lint: mandoc is not installed (apt-get install mandoc)"
fi

# A word is "in" a page when it appears as a macro argument or in text.
in_page() { grep -q -- "$1" "$man/$2"; }

run help
commands=$(printf '%s\n' "$out" | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p')
for c in $commands; do
    grep -q "^\.It Cm $c\b" "$man/switchyard.1"
    ok $? "switchyard(1) describes the command $c"
    run "$c" --help
    for o in $(printf '%s\n' "$out" | sed -n '1s/^usage: switchyard \[--config FILE\] [a-z]*//p' |
               grep -o -- '--[a-z][a-z-]*'); do
        in_page "Fl -${o#--}" switchyard.1
        ok $? "switchyard(1) describes $c $o"
    done
done

# The keys the program knows, from its own "unknown key" errors.
known() { printf '%s\n' "$out" | sed -n "s/.*unknown key '$1'.*(known: \(.*\))$/\1/p" | tr -d ',' ; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sy-man-XXXXXX")
chmod 0700 "$tmp"
mkdir "$tmp/plugins" "$tmp/wf"
install -m 0755 "$SY_THREAD_PLUGIN" "$tmp/plugins/thread.so"
printf 'zz1 = 1;\n' >"$tmp/a.cfg"
run --config "$tmp/a.cfg" check
for k in $(known zz1); do
    in_page "Cm $k" switchyard.cfg.5
    ok $? "switchyard.cfg(5) describes the key $k"
done
printf 'log = { zz6 = 1; };\n' >"$tmp/a.cfg"
run --config "$tmp/a.cfg" check
for k in $(known log.zz6); do
    in_page "Cm $k" switchyard.cfg.5
    ok $? "switchyard.cfg(5) describes the key log.$k"
done
printf 'admin = { zz6 = 1; };\n' >"$tmp/c.cfg"
run --config "$tmp/c.cfg" check
for k in $(known admin.zz6); do
    in_page "Cm $k" switchyard.cfg.5
    ok $? "switchyard.cfg(5) describes the admin key $k"
done
# The global options, from the program's usage.
run help
for o in $(printf '%s\n' "$out" | sed -n '/^  --/s/^  \(--[a-z-]*\).*/\1/p'); do
    in_page "Fl -${o#--}" switchyard.1
    ok $? "switchyard(1) describes the global option $o"
done
cat >"$tmp/b.cfg" <<CFG
plugin_dirs = ["plugins"];
workflow_dirs = ["wf"];
executors = { default = { plugin = "thread"; zz2 = 1; }; };
CFG
cat >"$tmp/wf/w.cfg" <<CFG
workflow = { name = "w"; zz3 = 1; retry = { zz4 = 1; };
  tasks = ( { id = "a"; command = ["true"]; zz5 = 1; } ); };
CFG
run --config "$tmp/b.cfg" check
for k in $(known zz2); do
    in_page "Cm $k" switchyard.cfg.5
    ok $? "switchyard.cfg(5) describes the instance setting $k"
done
for k in $(known zz3) $(known zz4); do
    in_page "Cm $k" switchyard-workflow.5
    ok $? "switchyard-workflow(5) describes the key $k"
done
sed -i 's/zz3 = 1; retry = { zz4 = 1; };//' "$tmp/wf/w.cfg"
run --config "$tmp/b.cfg" check
for k in $(known zz5); do
    in_page "Cm $k" switchyard-workflow.5 || in_page "Cm [a-z_, ]*$k" switchyard-workflow.5
    ok $? "switchyard-workflow(5) describes the task key $k"
done

rm -rf "$tmp"
done_testing
