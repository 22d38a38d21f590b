"""Converts an X window dump (xwd -root) to PNG with VTK (pvpython xwd_to_png.py in.xwd out.png).
Handles the 24/32-bit TrueColor dumps of Xvfb."""
import struct
import sys

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonDataModel import vtkImageData
from vtkmodules.vtkIOImage import vtkPNGWriter

data = open(sys.argv[1], "rb").read()
h = struct.unpack(">25I", data[:100])
header_size, width, height = h[0], h[4], h[5]
byte_order, bpp, bytes_per_line = h[7], h[11], h[12]
masks, ncolors = h[14:17], h[19]
start = header_size + 12 * ncolors
if bpp not in (24, 32):
    sys.exit(f"unsupported xwd: {bpp} bits per pixel")
nbytes = bpp // 8
rows = np.frombuffer(data, dtype=np.uint8, count=height * bytes_per_line, offset=start)
rows = rows.reshape(height, bytes_per_line)[:, :width * nbytes].reshape(height, width, nbytes).astype(np.uint32)
order = range(nbytes) if byte_order == 0 else range(nbytes - 1, -1, -1)
raw = np.zeros((height, width), dtype=np.uint32)
for shift, b in enumerate(order):
    raw |= rows[:, :, b] << (8 * shift)


def channel(mask):
    shift = (mask & -mask).bit_length() - 1
    return ((raw & mask) >> shift).astype(np.uint8)


rgb = np.dstack([channel(m) for m in masks])
# Crop to what is on screen (the root window of Xvfb is black around the application window).
lit = np.argwhere(rgb.max(axis=2) > 0)
if lit.size:
    (y0, x0), (y1, x1) = lit.min(axis=0), lit.max(axis=0)
    rgb = rgb[y0:y1 + 1, x0:x1 + 1]
height, width = rgb.shape[:2]
rgb = rgb[::-1].copy()  # VTK images start at the bottom row
img = vtkImageData()
img.SetDimensions(width, height, 1)
arr = numpy_to_vtk(rgb.reshape(-1, 3), deep=1)
img.GetPointData().SetScalars(arr)
w = vtkPNGWriter()
w.SetFileName(sys.argv[2])
w.SetInputData(img)
w.Write()
print(f"{sys.argv[2]}: {width} x {height}")
