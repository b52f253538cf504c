#!/bin/sh
# libpq, libmicrohttpd (with its gnutls) and libcurl are opened when a
# command first needs them (host/base/library.h), not at every start: a
# command on a SQLite store opens none of them, `--host` opens libcurl
# alone, a PostgreSQL store libpq alone.
. "$SY_SRCDIR/tests/cli/tap.sh"
d=$(mktemp -d "${TMPDIR:-/tmp}/sy-lib-XXXXXX") || exit 1
trap 'rm -rf "$d"' EXIT
printf 'store = "sqlite:%s/store.db";\n' "$d" >"$d/sqlite.cfg"
# Port 9 (discard) on the loopback: nothing answers, the connection is
# refused at once.
printf 'store = "postgresql://127.0.0.1:9/none?connect_timeout=2";\n' >"$d/postgres.cfg"

# What the dynamic loader opened, in its own words (ld.so(8),
# LD_DEBUG=files: "file=libpq.so.5 [0]; ..."); the program bare, not
# under $SY_WRAP, whose own start would be listed too.
loads() {
    tap_runs=$((tap_runs + 1))
    out=$(LD_DEBUG=files "$SWITCHYARD" "$@" 2>&1)
    rc=$?
}

loads --version
rc_is 0 "--version runs"
for lib in libpq libmicrohttpd libgnutls libcurl; do
    hasnt "file=$lib" "--version opens no $lib"
done

loads --config "$d/sqlite.cfg" limits
rc_is 0 "limits on a SQLite store runs"
for lib in libpq libmicrohttpd libgnutls libcurl; do
    hasnt "file=$lib" "limits on a SQLite store opens no $lib"
done

loads --host http://127.0.0.1:9 status 1
case "$out" in
*"which this build lacks"*)
    echo "# this build has no libcurl: --host not checked" ;;
*)
    rc_is 1 "status over --host to a closed port fails"
    has "file=libcurl" "--host opens libcurl"
    hasnt "file=libpq" "and not libpq"
    hasnt "file=libmicrohttpd" "nor libmicrohttpd" ;;
esac

loads --config "$d/postgres.cfg" status 1
case "$out" in
*"not in this build"*)
    echo "# this build has no libpq: a PostgreSQL store not checked" ;;
*)
    rc_is 2 "status on a PostgreSQL store nobody serves fails"
    has "file=libpq" "a PostgreSQL store opens libpq"
    has "cannot connect" "and then says it cannot connect"
    hasnt "file=libmicrohttpd" "and not libmicrohttpd"
    hasnt "file=libcurl" "nor libcurl" ;;
esac

done_testing
