#!/bin/sh
# list: the words the map runs over.
cat >/dev/null
echo '{"words": ["switchyard", "maps", "a", "task", "over", "a", "list"]}'
