#!/bin/sh
# train: stands in for a training job.  It gets its devices as UUIDs in
# CUDA_VISIBLE_DEVICES (what CUDA, PyTorch and nvidia-smi -i accept).
cat >/dev/null
echo "training on $CUDA_VISIBLE_DEVICES" >&2
sleep "${TRAIN_SECONDS:-1}"
printf '{"model": "checkpoints/model.pt", "trained_on": "%s"}\n' "$CUDA_VISIBLE_DEVICES"
