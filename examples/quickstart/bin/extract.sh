#!/bin/sh
# extract: reads the run's context on stdin (ignored here) and prints the
# extracted rows as a JSON object on stdout.
cat >/dev/null
cat <<'JSON'
{"mode": "full",
 "rows": [{"id": 1, "amount": 12.5}, {"id": 2, "amount": 7.25}, {"id": 3, "amount": 30}]}
JSON
