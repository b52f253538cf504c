#!/bin/sh
# `switchyard plugins`: each planted plugin reported loaded or refused, why.
. "$SY_SRCDIR/tests/cli/tap.sh"
dir=$(plugin_dir good noentry abi2 small nofn)
cp "$dir/good.so" "$dir/ww.so" && chmod 0757 "$dir/ww.so"
printf 'not a shared object\n' >"$dir/text.so" && chmod 0644 "$dir/text.so"
SWITCHYARD_PLUGIN_PATH=$dir; export SWITCHYARD_PLUGIN_PATH
cd "$dir" || exit 1

run plugins
rc_is 0 "plugins exits 0 without a config file"
has "good         1.0.0      1.0   loaded   $dir/good.so" "the good plugin is loaded, with version and ABI"
has "refused  $dir/noentry.so" "a file without the entry symbol is refused"
has "no sy_executor_entry symbol" "saying why"
has "built for executor ABI 2.0" "an ABI 2.0 plugin is refused for its major"
has "descriptor too small" "a short descriptor is refused"
has "missing required function submit()" "a missing function is refused"
has "not an ELF object" "a text file is refused"
has "$dir/ww.so" "the world-writable plugin is listed"
has "chmod go-w $dir/ww.so" "refused with the fix"
has "searched:" "the directories searched are shown"

run plugins -v
has "instance settings:" "-v shows declared settings"
has "slots" "including their names"

run --config "$dir/absent.cfg" plugins
rc_is 2 "an explicit missing config is an error"

cd / && rm -rf "$dir"
done_testing
