#!/usr/bin/env bash
# Installs what VoxelEM needs on a fresh Debian 12 machine (run as root): the packages listed in
# scripts/debian-packages.txt, without recommends. The CUDA Toolkit is not a Debian package here:
# it is expected at /usr/local/cuda; without it the build is CPU-only.
# scripts/fresh_debian_check.sh runs this (and the README's commands) in a fresh debootstrap root.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
LIST="$(dirname "$0")/debian-packages.txt"
mapfile -t PACKAGES < <(sed 's/#.*//' "$LIST" | tr -s ' \t' '\n' | grep -v '^$')
apt-get update -q
apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"
if [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: CUDA found at /usr/local/cuda ($(/usr/local/cuda/bin/nvcc --version | tail -1))"
else
  echo "setup: no CUDA Toolkit at /usr/local/cuda: VoxelEM will build its CPU engine only"
fi
