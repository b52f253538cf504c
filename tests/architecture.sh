#!/bin/sh
# The house rules, checked on every `make check`: tests/architecture.py.
exec python3 "$SY_SRCDIR/tests/architecture.py" "$SY_SRCDIR" "$SY_BUILDDIR"
