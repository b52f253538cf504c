#!/bin/sh
# `switchyard route`: the documented answers on a sample routing file.
. "$SY_SRCDIR/tests/cli/tap.sh"
SWITCHYARD_PLUGIN_PATH=$(plugin_dir good); export SWITCHYARD_PLUGIN_PATH
cfg="$SY_TEST_DATA/cli/switchyard.cfg"

run --config "$cfg" route public::ml::train::fit
rc_is 0 "route exits 0"
has "public::ml::train::fit -> gpu" "a 4-segment ml name goes to gpu through **"
has "rule: $SY_TEST_DATA/cli/routes.cfg:5: match = \"*::ml::**\"" "names the winning rule with file:line"
has "routes.cfg:4: \"public::etl::*\" -> default: no match" "lists the rule tried before it"
has "routes.cfg:5: \"*::ml::**\" -> gpu: match" "marks the winner in the trace"
has "(2 later rules not tried)" "says what was not tried"

run --config "$cfg" route acme::ml::score
has "acme::ml::score -> gpu" "first match wins over later matching rules"

run --config "$cfg" route acme::etl::load
has "acme::etl::load -> fast" "acme::** takes the rest of acme"

run --config "$cfg" route public::etl::nightly::extract
has "public::etl::nightly::extract -> default" "* never crosses :: (4 segments fall to default)"
has "rule: default ($SY_TEST_DATA/cli/routes.cfg:2), no rule matched" "names the default's place"
has "routes.cfg:7: \"**::score\" -> fast: no match" "every rule was tried"

run --config "$cfg" route x::y::score --quiet
rc_is 0 "--quiet exits 0"
[ "$out" = "fast" ]; ok $? "--quiet prints the instance name alone"

SWITCHYARD_CONFIG="$cfg" run route public::etl::daily
has "public::etl::daily -> default" "SWITCHYARD_CONFIG is honoured"

run --config "$cfg" route "a::"
rc_is 2 "an invalid namespace is a usage error"
has "invalid namespace" "and says so"

run --config "$cfg" route
rc_is 2 "a missing namespace is a usage error"

run --config "$SY_TEST_DATA/cli/nope.cfg" route a::b
rc_is 2 "a missing config is reported"
has "nope.cfg: error: cannot read" "naming the file"

rm -rf "$SWITCHYARD_PLUGIN_PATH"
done_testing
