#!/bin/sh
# The gpu plugin passes the conformance kit on the fake NVML (four devices;
# the kit's tasks take one each, so most of them wait in the queue).
. "$SY_SRCDIR/tests/cli/tap.sh"
KIT=$SY_BUILDDIR/switchyard-conformance
if [ -n "$SY_WRAP" ]; then
    SWITCHYARD_CONFORMANCE_TIME_SCALE=${SWITCHYARD_CONFORMANCE_TIME_SCALE:-10}
    export SWITCHYARD_CONFORMANCE_TIME_SCALE
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-gpuconf-XXXXXX")
install -m 0755 "$SY_BUILDDIR/plugins/gpu/.libs/gpu.so" "$dir/gpu.so"
cat >"$dir/devices.txt" <<'DEV'
GPU-00000000-aaaa-0000-0000-000000000000 H100-SXM5-80GB 81920 0 0
GPU-11111111-bbbb-0000-0000-000000000000 H100-SXM5-80GB 81920 0 0
GPU-22222222-cccc-0000-0000-000000000000 H100-SXM5-80GB 81920 0 1
GPU-33333333-dddd-0000-0000-000000000000 H100-SXM5-80GB 81920 0 1
DEV
SY_FAKE_NVML_DEVICES=$dir/devices.txt
export SY_FAKE_NVML_DEVICES
sed "s|@FAKE_NVML@|$SY_BUILDDIR/tests/gpu/.libs/fakenvml.so|" \
    "$SY_SRCDIR/tests/data/conformance/gpu.cfg" >"$dir/gpu.cfg"

out=$($SY_WRAP "$KIT" "$dir/gpu.so" --params "$dir/gpu.cfg" 2>&1)
rc=$?
rc_is 0 "the gpu plugin passes the kit"
hasnt "FAIL " "with no failed check"
has "PASS capacity" "capacity is honest under concurrent submitters"
has "PASS cancel" "queued and running commands are cancelled"
out=$($SY_WRAP "$KIT" "$dir/gpu.so" --params "$dir/gpu.cfg" --only destroy --verbose 2>&1)
# The fake starts a thread at the first nvmlInit and keeps it, as the
# real driver does; no destroy() can join it, and the kit says whose it is.
has "kept for the process by a library: cuda-fake" "the driver's own thread is told apart from the plugin's"

rm -rf "$dir"
done_testing
