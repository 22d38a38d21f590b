#!/usr/bin/env bash
# Packs the C++ plugin tests (test_plugin_filters, test_fdfd_filter: the VTK filters driven directly) with the
# shared libraries it needs that the GPU machine lacks (ParaView's VTK, libVoxelEMFilters) into
# .carry/plugin-test (git-ignored), for scripts/device_check.sh to run there on the real GPU.
# Usage: bash scripts/collect_plugin_test.sh [build-dir]   (a CUDA + plugin build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
BINS=$(find "$BUILD" \( -name test_plugin_filters -o -name test_fdfd_filter \) -type f -perm -u+x)
[ -n "$BINS" ] || { echo "collect_plugin_test: no plugin test programs under $BUILD" >&2; exit 1; }
DEST=.carry/plugin-test
rm -rf "$DEST"
mkdir -p "$DEST/lib"
cp $BINS "$DEST/"
# Everything ldd resolves outside the base system (VTK/ParaView, the plugin's own libraries and
# their non-glibc dependencies); the GPU machine has glibc, libstdc++, libgomp and cuBLAS.
for BIN in $BINS; do ldd "$BIN"; done | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*|libgomp.so*|libcublas*|libcudart*) ;;
    *) cp -L "$lib" "$DEST/lib/" ;;
  esac
done
du -sh "$DEST"
