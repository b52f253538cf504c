#!/bin/sh
# total: after the map, its outputs arrive as one list under "measure".
grep -o '"letters": *[0-9]*' | awk -F: '{ n += $2 } END { printf "{\"letters\": %d}\n", n }'
