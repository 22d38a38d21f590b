#!/usr/bin/env bash
# Packs the C++ plugin test (test_plugin_filters: the VTK filters driven directly) with the
# shared libraries it needs that the GPU machine lacks (ParaView's VTK, libVoxelEMFilters) into
# .carry/plugin-test (git-ignored), for scripts/device_check.sh to run there on the real GPU.
# Usage: bash scripts/collect_plugin_test.sh [build-dir]   (a CUDA + plugin build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
BIN=$(find "$BUILD" -name test_plugin_filters -type f -perm -u+x | head -1)
[ -n "$BIN" ] || { echo "collect_plugin_test: no test_plugin_filters under $BUILD" >&2; exit 1; }
DEST=.carry/plugin-test
rm -rf "$DEST"
mkdir -p "$DEST/lib"
cp "$BIN" "$DEST/"
# Everything ldd resolves outside the base system (VTK/ParaView, the plugin's own libraries and
# their non-glibc dependencies); the GPU machine has glibc, libstdc++, libgomp and cuBLAS.
ldd "$BIN" | awk '/=> \// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*|libgomp.so*|libcublas*|libcudart*) ;;
    *) cp -L "$lib" "$DEST/lib/" ;;
  esac
done
du -sh "$DEST"
