#!/bin/sh
# `switchyard check`: a planted shadowed rule and a planted bad glob.
. "$SY_SRCDIR/tests/cli/tap.sh"
SWITCHYARD_PLUGIN_PATH=$(plugin_dir good); export SWITCHYARD_PLUGIN_PATH

run --config "$SY_TEST_DATA/cli/switchyard.cfg" check
rc_is 0 "a valid configuration checks clean"
has "ok: 3 executor instances, 4 routing rules, 1 plugin loaded, 0 workflows" "and says what it found"

bad="$SY_TEST_DATA/cli-bad"
run --config "$bad/switchyard.cfg" check
rc_is 1 "errors make check exit 1"
has "$bad/routes.cfg:6: error: invalid pattern \"ml::[abc\"" "the bad glob is an error at its file:line"
has "$bad/routes.cfg:5: warning: rule \"public::etl::*\" can never match" "the shadowed rule is a warning at its file:line"
has "earlier rule \"public::**\" at $bad/routes.cfg:4" "naming the rule that shadows it"
has "1 error, 1 warning" "with a summary"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sy-cli-XXXXXX")
printf 'executors = {\n  default = { plugin = "good"; slotz = 1; };\n};\nroutez = 1;\n' >"$tmp/switchyard.cfg"
run --config "$tmp/switchyard.cfg" check
rc_is 1 "typos are errors"
has "$tmp/switchyard.cfg:4: error: unknown key 'routez'" "an unknown top-level key names its line"

printf 'executors = {\n  default = { plugin = "good"; slotz = 1; };\n};\n' >"$tmp/switchyard.cfg"
run --config "$tmp/switchyard.cfg" check
has "$tmp/switchyard.cfg:2: error: executor 'default': unknown key 'slotz'" "an unknown instance setting names its line"

printf 'executors = {\n  default = { plugin = "good"; fail_create = true; };\n};\n' >"$tmp/switchyard.cfg"
run --config "$tmp/switchyard.cfg" check
rc_is 1 "a plugin refusing its settings fails check"
has "$tmp/switchyard.cfg:2: error: executor 'default': plugin 'good' refused its settings:" "with the plugin's message"

printf 'executors = { default = { plugin = "good" } \n' >"$tmp/switchyard.cfg"
run --config "$tmp/switchyard.cfg" check
rc_is 1 "a syntax error fails check"
has "$tmp/switchyard.cfg:2: error: syntax error" "at its line"

printf 'lease = "30s";\nmax_context_bytes = 5000000000;\nexecutors = { default = { plugin = "good"; }; };\n' >"$tmp/switchyard.cfg"
run --config "$tmp/switchyard.cfg" check
rc_is 1 "an integer libconfig would wrap fails check"
has "$tmp/switchyard.cfg:2: error: integer 5000000000 does not fit in 32 bits" "at its line"
has "write 5000000000L for a 64-bit integer" "saying how to write it"

: >"$tmp/empty.cfg"
run --config "$tmp/empty.cfg" check
rc_is 1 "an empty config lacks a default executor"
has "no executor instance 'default'" "and says how to add one"

run --config "$SY_TEST_DATA/cli-unmatched/switchyard.cfg" check
rc_is 0 "a rule no task matches is only a warning"
has "cli-unmatched/switchyard.cfg:8: warning: rule \"public::nightly::*\" matches none of the 2 tasks of the 1 known workflow" "check names the rule no known task matches"
hasnt "public::etl::**\" matches none" "a rule that matches a task is not reported"

rm -rf "$tmp" "$SWITCHYARD_PLUGIN_PATH"
done_testing
