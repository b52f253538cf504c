#!/bin/sh
# `switchyard check` looks at everything a run would need: the store's
# place on disk (creating nothing), the configured directories, the
# programs of command tasks and the libraries and symbols of function
# tasks, each error at its file and line.
. "$SY_SRCDIR/tests/cli/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sy-chk-XXXXXX")
chmod 0700 "$tmp"
mkdir "$tmp/plugins" "$tmp/wf" "$tmp/lib" "$tmp/bin"
install -m 0755 "$SY_THREAD_PLUGIN" "$tmp/plugins/thread.so"
cp "$SY_TASKLIB" "$tmp/lib/tasks.so"
printf '#!/bin/sh\necho "{}"\n' >"$tmp/bin/ok.sh" && chmod 0755 "$tmp/bin/ok.sh"
printf 'not a program\n' >"$tmp/bin/plain.txt" && chmod 0644 "$tmp/bin/plain.txt"
: >"$tmp/afile"

cfg() { # cfg STORE: a config with the thread plugin and wf/
    cat >"$tmp/switchyard.cfg" <<CFG
store = "$1";
plugin_dirs = ["plugins"];
workflow_dirs = ["wf"];
CFG
}

cat >"$tmp/wf/good.cfg" <<'WF'
workflow = {
  name = "good";
  tasks = (
    { id = "path"; command = ["sh", "-c", "echo {}"]; },
    { id = "rel"; command = ["../bin/ok.sh"]; },
    { id = "cwd"; command = ["./ok.sh"]; cwd = "../bin"; },
    { id = "fn"; function = "../lib/tasks.so:ok_echo"; }
  );
};
WF

cfg "sqlite:var/new/sy.db"
run --config "$tmp/switchyard.cfg" check
rc_is 0 "a good host checks clean"
has "ok: 1 executor instance" "and says so"
[ ! -e "$tmp/var" ]
ok $? "check creates no store and no directory"

cfg "sqlite:afile/sy.db"
run --config "$tmp/switchyard.cfg" check
rc_is 1 "a store under a regular file fails check"
has "$tmp/switchyard.cfg:1: error: store \"sqlite:afile/sy.db\": cannot create its directory: $tmp/afile is not a directory" \
    "at the store's line, naming the file in the way"

mkdir "$tmp/dbdir"
cfg "sqlite:dbdir"
run --config "$tmp/switchyard.cfg" check
rc_is 1 "a store that is a directory fails check"
has "$tmp/switchyard.cfg:1: error: store \"sqlite:dbdir\": $tmp/dbdir is not a regular file" "saying so"

cfg "sqlite:var/sy.db?sync=maybe"
run --config "$tmp/switchyard.cfg" check
rc_is 1 "a bad store option fails check"
has "$tmp/switchyard.cfg:1: error: store \"sqlite:var/sy.db?sync=maybe\": bad value \"maybe\" for option \"sync\"" \
    "with the store's reason"
[ ! -e "$tmp/var" ]
ok $? "and creates nothing"

cfg "mysql://db.example/sy"
run --config "$tmp/switchyard.cfg" check
rc_is 1 "an unknown kind of store fails check"
has "$tmp/switchyard.cfg:1: error: store \"mysql:...\": unknown kind of store" "at its line"

cfg "sqlite://var/sy.db"
run --config "$tmp/switchyard.cfg" check
rc_is 1 "sqlite:// fails check"
has "$tmp/switchyard.cfg:1: error: store \"sqlite://var/sy.db\": write \"sqlite:PATH\" without \"//\"" "with the hint"

cfg "sqlite::memory:"
run --config "$tmp/switchyard.cfg" check
rc_is 0 "an in-memory store checks clean"

cat >"$tmp/switchyard.cfg" <<CFG
store = "sqlite::memory:";
plugin_dirs = ["plugins",
               "noplugins"];
workflow_dirs = ["wf", "noworkflows"];
CFG
run --config "$tmp/switchyard.cfg" check
rc_is 1 "a missing directory fails check"
has "$tmp/switchyard.cfg:3: error: plugin_dirs: $tmp/noplugins: No such file or directory" \
    "a missing plugin directory at its own line"
has "$tmp/switchyard.cfg:4: error: workflow_dirs: $tmp/noworkflows: No such file or directory" \
    "a missing workflow directory at its line"

cfg "sqlite::memory:"
cat >"$tmp/wf/bad.cfg" <<'WF'
workflow = {
  name = "bad";
  tasks = (
    { id = "nowhere"; command = ["no-such-program-sy"]; },
    { id = "missing"; command = ["../bin/absent.sh"]; },
    { id = "plain"; command = ["../bin/plain.txt"]; },
    { id = "nolib"; function = "../lib/absent.so:f"; },
    { id = "nosym"; function = "../lib/tasks.so:no_such_symbol"; }
  );
};
WF
run --config "$tmp/switchyard.cfg" check
rc_is 1 "bad tasks fail check"
has "$tmp/wf/bad.cfg:4: error: task 'nowhere': command no-such-program-sy: not found on PATH" \
    "a program not on PATH, at its task's line"
has "$tmp/wf/bad.cfg:5: error: task 'missing': command ../bin/absent.sh: $tmp/wf/../bin/absent.sh: No such file or directory" \
    "a relative program that does not exist, resolved against the workflow's directory"
has "$tmp/wf/bad.cfg:6: error: task 'plain': command ../bin/plain.txt: $tmp/wf/../bin/plain.txt is not an executable file" \
    "a file that cannot be executed"
has "$tmp/wf/bad.cfg:7: error: task 'nolib'" "a missing task library at its line"
has "absent.so" "naming the library"
has "$tmp/wf/bad.cfg:8: error: task 'nosym'" "a missing symbol at its line"
has "no_such_symbol" "naming the symbol"
hasnt "good.cfg" "the good workflow has nothing to say"

rm -rf "$tmp"
done_testing
