# Sourced by scripts/test and scripts/demo: installing what is missing and
# building the tree.  Bash only.

SY_BUILD_PACKAGES="build-essential autoconf automake libtool pkg-config \
libconfig-dev libuv1-dev libjansson-dev libsqlite3-dev libcurl4-openssl-dev \
libssl-dev libcmocka-dev libpq-dev libmimalloc-dev libmicrohttpd-dev libgnutls28-dev \
libyaml-dev"
# The PostgreSQL store's tests start a throwaway server from these.
SY_PG_TEST_PACKAGES="postgresql-15"
# tzdata: the schedule tests read Europe/Berlin and America/New_York.
# prometheus: its promtool checks the metrics file (tests/integration/metrics.sh).
# chromium, chromium-driver, python3-selenium: the dashboard's browser test;
# nghttp2-proxy, openssl: the lambda plugin's HTTP/2 test.
# slurm-wlm, munge: the slurm plugin's tests start a one-node cluster.
# slurmdbd, mariadb-server: tests/slurm/accounting.sh adds accounting to it.
SY_TEST_PACKAGES="valgrind python3 curl mandoc tzdata prometheus nghttp2-proxy openssl chromium chromium-driver python3-selenium slurm-wlm munge slurmdbd mariadb-server"
# kubernetes-client: kubectl 1.20, which tests/kubernetes/kubectl.sh drives
# against the loopback API server; a kubectl already on PATH does as well
# (Google Cloud SDK's `kubectl` package conflicts with Debian's).
command -v kubectl >/dev/null 2>&1 || SY_TEST_PACKAGES="$SY_TEST_PACKAGES kubernetes-client"
# Only scripts/fuzz needs these (clang with libFuzzer): make check never does.
SY_FUZZ_PACKAGES="clang-14 libclang-rt-14-dev"

sy_say() { printf '==> %s\n' "$*" >&2; }

# Installs the Debian packages named that are not installed yet: as root
# directly, otherwise through sudo; says what to run when neither works.
sy_require_packages() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo="sudo"
        else
            echo "missing Debian packages: ${missing[*]}" >&2
            echo "install them with: sudo apt-get install ${missing[*]}" >&2
            return 1
        fi
    fi
    sy_say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q >/dev/null || { echo "apt-get update failed" >&2; return 1; }
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
        { echo "apt-get install ${missing[*]} failed" >&2; return 1; }
}

# Generates configure when it is missing or older than its inputs.
sy_bootstrap() {
    if [ ! -x configure ] || [ configure.ac -nt configure ] ||
        [ -n "$(find . -name Makefile.am -newer configure -print -quit)" ] ||
        [ tests/Makefile.inc -nt configure ]; then
        sy_say "autoreconf -fi"
        autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
    fi
}

# sy_configure DIR ARGS...: configures a VPATH build in DIR unless it is
# already configured with the same arguments.
sy_configure() {
    local dir=$1; shift
    mkdir -p "$dir"
    local want="$*"
    if [ ! -f "$dir/Makefile" ] || [ "$(cat "$dir/.sy-configure-args" 2>/dev/null)" != "$want" ] ||
        [ configure -nt "$dir/Makefile" ]; then
        sy_say "configure $want ($dir)"
        (cd "$dir" && "$OLDPWD/configure" "$@" >configure.out 2>&1) || {
            tail -n 30 "$dir/configure.out" >&2
            return 1
        }
        printf '%s' "$want" >"$dir/.sy-configure-args"
    fi
}

sy_jobs() { nproc 2>/dev/null || echo 2; }
