# Sourced by the gpu plugin's shell tests: a scratch host with the gpu
# plugin on the fake NVML (tests/gpu/fake_nvml.c), the thread plugin as
# the default instance, and a routing file sending *::gpu*::** to `gpu`.
. "$SY_SRCDIR/tests/integration/lib.sh"
GPU_PLUGIN=$SY_BUILDDIR/plugins/gpu/.libs/gpu.so
FAKE_NVML=$SY_BUILDDIR/tests/gpu/.libs/fakenvml.so

# make_gpu_host SETTINGS: $host with devices.txt (edit before the run),
# events.txt (append to inject), control.txt; SETTINGS are extra lines of
# the gpu instance's group.
make_gpu_host() {
    host=$(mktemp -d "${TMPDIR:-/tmp}/sy-gpu-XXXXXX") || exit 1
    chmod 0700 "$host"
    mkdir -p "$host/plugins" "$host/workflows"
    install -m 0755 "$GPU_PLUGIN" "$host/plugins/gpu.so"
    install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
    cat >"$host/devices.txt" <<'DEV'
GPU-00000000-aaaa-0000-0000-000000000000 H100-SXM5-80GB 81920 0 0
GPU-11111111-bbbb-0000-0000-000000000000 H100-SXM5-80GB 81920 0 0
GPU-22222222-cccc-0000-0000-000000000000 A100-PCIE-40GB 40960 1 1
GPU-33333333-dddd-0000-0000-000000000000 A100-PCIE-40GB 40960 0 1
DEV
    : >"$host/events.txt"
    cat >"$host/switchyard.cfg" <<CFG
store = "sqlite:var/switchyard.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
routes = "routes.cfg";
executors = {
  default = { plugin = "thread"; workers = 2; };
  gpu = {
    plugin = "gpu";
    nvml_library = "$FAKE_NVML";
    health_interval = "50ms";
    control_file = "$host/control.txt";
    kill_grace = "200ms";
    retry_after = "100ms";
    ${1:-}
  };
};
CFG
    cat >"$host/routes.cfg" <<'CFG'
routes = {
  default = "default";
  rules = ( { match = "*::gpu*::**"; executor = "gpu"; } );
};
CFG
    SWITCHYARD_CONFIG="$host/switchyard.cfg"
    SY_FAKE_NVML_DEVICES="$host/devices.txt"
    SY_FAKE_NVML_EVENTS="$host/events.txt"
    export SWITCHYARD_CONFIG SY_FAKE_NVML_DEVICES SY_FAKE_NVML_EVENTS
}

# The UUIDs of the fake devices, by index.
uuid() { sed -n "$(($1 + 1))p" "$host/devices.txt" | cut -d' ' -f1; }

# wait_for FILE TEXT [SECONDS]: until FILE holds TEXT.
wait_for() {
    local n=0 limit=$((${3:-10} * 20))
    while ! grep -q -- "$2" "$1" 2>/dev/null; do
        n=$((n + 1))
        [ $n -ge $limit ] && return 1
        sleep 0.05
    done
}
