#!/bin/sh
# The house rules, checked on every `make check`: tests/architecture.py.
# It runs no program of ours under valgrind (nm and Python only), so the
# valgrind pass, which is also the tarball's check, runs it as it is.
exec python3 "$SY_SRCDIR/tests/architecture.py" "$SY_SRCDIR" "$SY_BUILDDIR"
