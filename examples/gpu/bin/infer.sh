#!/bin/sh
# infer SHARD: stands in for scoring one shard with the trained model on
# the one GPU it was given.
cat >/dev/null
sleep "${INFER_SECONDS:-0.2}"
printf '{"score_%s": {"gpu": "%s"}}\n' "$1" "$CUDA_VISIBLE_DEVICES"
