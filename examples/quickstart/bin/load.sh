#!/bin/sh
# load: pretends the warehouse is busy on the first attempt, so the retry
# policy shows; succeeds from the second attempt on.
input=$(cat)
if [ "${SWITCHYARD_ATTEMPT:-1}" -lt 2 ]; then
    echo "warehouse busy, try again" >&2
    exit 75
fi
echo "loaded: $input" >&2
echo '{"loaded": true}'
