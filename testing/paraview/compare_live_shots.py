"""Two screen dumps of the GUI live check (PNG): they must differ in a region of the render view
(the wave moved) and agree elsewhere in most of the window (the same GUI).
  pvpython compare_live_shots.py live_1.png live_2.png"""
import sys

import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOImage import vtkPNGReader


def load(path):
    r = vtkPNGReader()
    r.SetFileName(path)
    r.Update()
    img = r.GetOutput()
    w, h, _ = img.GetDimensions()
    return vtk_to_numpy(img.GetPointData().GetScalars()).reshape(h, w, -1)[:, :, :3].astype(int)


a, b = load(sys.argv[1]), load(sys.argv[2])
diff = np.abs(a - b).sum(axis=2) > 30
changed = diff.mean()
ys, xs = np.nonzero(diff)
print("changed pixels: %.2f %% of the screen" % (100 * changed))
if len(ys):
    print("changed box: x %d..%d, y %d..%d of %d x %d" % (xs.min(), xs.max(), ys.min(), ys.max(), a.shape[1], a.shape[0]))
bright = (a.sum(axis=2) > 60).mean()
ok = 0.002 < changed < 0.6 and bright > 0.05
print(("PASS" if ok else "FAIL") + " the two screenshots differ where the wave moved (and the GUI is drawn)")
sys.exit(0 if ok else 1)
