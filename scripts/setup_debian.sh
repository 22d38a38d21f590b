#!/usr/bin/env bash
# Installs what VoxelEM needs on a fresh Debian 12 machine (run as root). The CUDA Toolkit is not a
# Debian package here: it is expected at /usr/local/cuda; without it the build is CPU-only.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# Build tools, GoogleTest, ParaView 5.11 (with its own VTK 9.2) and what find_package(ParaView)
# needs on a fresh machine (../shared/notes/environment.md), Xvfb for the GUI check.
apt-get install -y -q --no-install-recommends \
  build-essential cmake ninja-build git pkg-config libgtest-dev \
  paraview paraview-dev python3-paraview python3-numpy xvfb xauth \
  qtbase5-dev libutfcpp-dev qttools5-dev libqt5svg5-dev libqt5x11extras5-dev qtxmlpatterns5-dev-tools \
  libhdf5-dev libnetcdf-dev libeigen3-dev libexpat1-dev libjsoncpp-dev liblz4-dev liblzma-dev \
  libxml2-dev zlib1g-dev libpng-dev libjpeg-dev libtiff-dev libfreetype-dev libglew-dev libogg-dev \
  libtheora-dev libpugixml-dev libdouble-conversion-dev libfmt-dev libprotobuf-dev protobuf-compiler \
  libcgns-dev libgl2ps-dev libproj-dev libsqlite3-dev libopenmpi-dev libavformat-dev libavcodec-dev \
  libavutil-dev libswscale-dev libgdal-dev libpq-dev unixodbc-dev libxt-dev libgeotiff-dev \
  libexodusii-dev libcli11-dev nlohmann-json3-dev
if [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: CUDA found at /usr/local/cuda ($(/usr/local/cuda/bin/nvcc --version | tail -1))"
else
  echo "setup: no CUDA Toolkit at /usr/local/cuda: VoxelEM will build its CPU engine only"
fi
