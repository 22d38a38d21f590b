"""pvpython test: FDTD Live (issue 14), driven as the GUI's live-source timer drives it
(examples/voxelem_live.py: Running, then Tick, MarkModified and a render).

- 2D (100 x 100 cells, TM, CW point source): the first update builds the run at step 0; each tick
  advances StepsPerTick steps and the field changes; Paused: ticks do nothing and Running is 0;
  un-pausing resumes at the same step (no restart); StepsPerTick changes the stride without a
  restart; MaximumSteps stops the ticks there; Reset goes back to step 0; changing a source or
  material property (SourceFrequency, CourantFactor) restarts at step 0 (NumberOfResets + 1);
  display changes (representation, colouring, camera) and re-renders do not; the probe table grows
  with the steps; the same steps through FDTD Solver give the same field.
- Display decimation (DisplayStride, MaximumDisplayCells): the default shows small grids at full
  resolution (CurrentDisplayStride 1); DisplayStride 3 and 4 and the automatic stride under a small
  MaximumDisplayCells give the decimated image (extent ceil(n / stride), spacing n * h / m, the same
  origin and bounds) whose E, E_magnitude and material values equal the full-resolution output's at
  the sampled cells floor((I + 1/2) n / m); none of these changes restarts the run, ticks go on while
  decimated, and stride 1 gives the full field back; the same on a flat image and in 3D.
- 3D (24^3 cells): a Slice of the live output updates with the ticks.
- A bad value (StepsPerTick 0 via the property, Polarization2D 7): one message, empty outputs,
  Running 0, and ticks do not start it.

  xvfb-run -a pvpython --force-offscreen-rendering test_fdtd_live.py --plugin VoxelEMPlugin.so
"""
import argparse
import os
import sys

from paraview.simple import *  # noqa: F401,F403
from paraview import servermanager as sm

import numpy as np
from vtkmodules.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonDataModel import vtkImageData

from vem_pvtest import Checker, update_capturing

ap = argparse.ArgumentParser()
ap.add_argument("--plugin", required=True)
args = ap.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
from voxelem_live import info, tick  # noqa: E402

chk = Checker()
H = 2e-3


def image(n, nz):
    img = vtkImageData()
    img.SetDimensions(n + 1, n + 1, nz + 1)
    img.SetSpacing(H, H, H)
    img.SetOrigin(-n * H / 2, -n * H / 2, -nz * H / 2)
    nc = img.GetNumberOfCells()
    for name, v in (("permittivity", 1.0), ("conductivity", 0.0)):
        a = numpy_to_vtk(np.full(nc, v), deep=1)
        a.SetName(name)
        img.GetCellData().AddArray(a)
    src = TrivialProducer()
    src.GetClientSideObject().SetOutput(img)
    return src


def field(proxy):
    return np.array(dsa.WrapDataObject(sm.Fetch(proxy)).CellData["E_magnitude"])


def cells3(img, name):
    """A cell array of an image as [K, J, I(, component)] (x fastest)."""
    ext = img.GetExtent()
    n = [max(ext[2 * a + 1] - ext[2 * a], 1) for a in range(3)]
    a = np.array(dsa.WrapDataObject(img).CellData[name])
    return a.reshape((n[2], n[1], n[0]) + a.shape[1:])


def sampled_cells(n, stride):
    m = -(-n // stride)
    return np.minimum(n - 1, ((2 * np.arange(m) + 1) * n) // (2 * m))


def check_decimation(proxy, full, stride, what, names=("E_magnitude", "E", "permittivity")):
    """The proxy's output (DisplayStride `stride` in effect) against `full` (stride 1) sampled."""
    out = sm.Fetch(proxy)
    fext, fsp, forg = full.GetExtent(), full.GetSpacing(), full.GetOrigin()
    ok, why = info(proxy, "CurrentDisplayStride") == stride, []
    idx = []
    for a in range(3):
        n = max(fext[2 * a + 1] - fext[2 * a], 1)
        i = sampled_cells(n, stride)
        idx.append(i)
        want_hi = 0 if fext[2 * a + 1] == 0 else len(i)
        if out.GetExtent()[2 * a:2 * a + 2] != (0, want_hi):
            ok = False
            why.append("extent %s" % (out.GetExtent(),))
        if abs(out.GetSpacing()[a] - fsp[a] * n / len(i)) > 1e-12 * fsp[a] or abs(out.GetOrigin()[a] - forg[a]) > 1e-12:
            ok = False
            why.append("spacing/origin %s %s" % (out.GetSpacing(), out.GetOrigin()))
    b, fb = out.GetBounds(), full.GetBounds()
    if max(abs(b[q] - fb[q]) for q in range(6)) > 1e-9:
        ok = False
        why.append("bounds %s vs %s" % (b, fb))
    for name in names:
        want = cells3(full, name)[np.ix_(idx[2], idx[1], idx[0])]
        got = cells3(out, name) if out.GetCellData().GetArray(name) else None
        if got is None or got.shape != want.shape or not np.array_equal(got, want):
            ok = False
            why.append("%s differs" % name)
    chk.check(ok and out.GetNumberOfCells() == np.prod([len(i) for i in idx]),
              "%s: DisplayStride %d: %d cells, extent %s, values = the full field sampled %s"
              % (what, stride, out.GetNumberOfCells(), out.GetExtent(), why))


def full_copy(proxy):
    img = vtkImageData()
    img.DeepCopy(sm.Fetch(proxy))
    return img


step = lambda p: info(p, "CurrentStep")  # noqa: E731
resets = lambda p: info(p, "NumberOfResets")  # noqa: E731

src2 = image(100, 1)
live = FDTDLive(Input=src2)
live.Backend = "CPU"
live.SourcePosition = [0.0, 0.0, 0.0]
live.SourceWaveform = "Sinusoid (CW, smooth ramp)"
live.SourceFrequency = 10e9
live.StepsPerTick = 20
view = CreateView("RenderView")
view.ViewSize = [400, 400]
disp = Show(live, view)
ColorBy(disp, ("CELLS", "E_magnitude"))
Render(view)
chk.check(step(live) == 0 and resets(live) == 1, "first update: step 0, one start (%d, %d)" % (step(live), resets(live)))
f0 = field(live)
chk.check(tick(live, view) and step(live) == 20, "tick: 20 steps (%d)" % step(live))
f1 = field(live)
chk.check(np.abs(f1 - f0).max() > 0, "tick: the field changed")
tick(live, view)
tick(live, view)
chk.check(step(live) == 60, "three ticks: step 60 (%d)" % step(live))
probes = sm.Fetch(live, idx=1)
chk.check(probes.GetNumberOfRows() == 60, "probe table: 60 rows (%d)" % probes.GetNumberOfRows())

live.Paused = 1
Render(view)
chk.check(not tick(live, view) and step(live) == 60 and info(live, "Running") == 0,
          "paused: no tick, step 60, Running 0 (%d)" % step(live))
live.SMProxy.InvokeCommand("Tick")  # a Tick while paused does not advance either
live.UpdatePipeline()
chk.check(step(live) == 60, "paused: an explicit Tick does not advance (%d)" % step(live))
live.Paused = 0
Render(view)
chk.check(step(live) == 60 and resets(live) == 1, "resumed: still step 60, no restart")
chk.check(tick(live, view) and step(live) == 80, "resumed: the next tick goes on to 80 (%d)" % step(live))

live.StepsPerTick = 5
tick(live, view)
chk.check(step(live) == 85 and resets(live) == 1, "StepsPerTick 5: step 85 without a restart (%d)" % step(live))

# Display changes and re-renders do not touch the run.
disp.SetRepresentationType("Surface With Edges")
ColorBy(disp, ("CELLS", "E", "Magnitude"))
view.CameraPosition = [0.1, 0.1, 0.5]
Render(view)
Render(view)
chk.check(step(live) == 85 and resets(live) == 1, "display changes: step 85, no restart (%d, %d)" % (step(live), resets(live)))
ColorBy(disp, ("CELLS", "E_magnitude"))

live.MaximumSteps = 95
n = sum(1 for _ in range(5) if tick(live, view))
chk.check(step(live) == 95 and n == 2 and info(live, "Running") == 0,
          "MaximumSteps 95: two ticks reach 95 and stop (%d ticks, step %d)" % (n, step(live)))
live.MaximumSteps = 0

live.Reset()
Render(view)
chk.check(step(live) == 0 and resets(live) == 2, "Reset: step 0 (%d, resets %d)" % (step(live), resets(live)))

# Properties of the model or the source restart the run.
tick(live, view)
live.SourceFrequency = 5e9
Render(view)
chk.check(step(live) == 0 and resets(live) == 3, "SourceFrequency changed: restart at 0 (%d, %d)" % (step(live), resets(live)))
tick(live, view)
live.CourantFactor = 0.9
Render(view)
chk.check(step(live) == 0 and resets(live) == 4, "CourantFactor changed: restart at 0 (%d, %d)" % (step(live), resets(live)))

# Display decimation: the solver keeps full resolution; none of these restarts the run.
chk.check(info(live, "CurrentDisplayStride") == 1 and sm.Fetch(live).GetExtent() == (0, 116, 0, 116, 0, 1),
          "default (automatic, 116^2 cells): full resolution (stride %d)" % info(live, "CurrentDisplayStride"))
tick(live, view)
live.Paused = 1
Render(view)
s0, r0 = step(live), resets(live)
full = full_copy(live)
for stride in (3, 4):
    live.DisplayStride = stride
    Render(view)
    check_decimation(live, full, stride, "2D 116^2")
live.DisplayStride = 0
live.MaximumDisplayCells = 1000  # 116^2 > 1000: the smallest stride with ceil(116 / s)^2 <= 1000 is 4
Render(view)
check_decimation(live, full, 4, "2D automatic, MaximumDisplayCells 1000")
chk.check(step(live) == s0 and resets(live) == r0,
          "DisplayStride / MaximumDisplayCells changes: no restart, step %d (%d), resets %d" % (step(live), s0, resets(live)))
live.Paused = 0
chk.check(tick(live, view) and step(live) == s0 + 5 and resets(live) == r0 and sm.Fetch(live).GetNumberOfCells() == 29 * 29,
          "decimated: ticks go on (step %d, %d cells)" % (step(live), sm.Fetch(live).GetNumberOfCells()))
live.Paused = 1
Render(view)
dec = full_copy(live)
live.DisplayStride = 1
Render(view)
full = full_copy(live)
check_decimation(live, full, 1, "2D back to stride 1")
live.DisplayStride = 4
Render(view)
check_decimation(live, full, 4, "2D stride 4 after ticks")
chk.check(np.array_equal(cells3(dec, "E_magnitude"), cells3(sm.Fetch(live), "E_magnitude")),
          "the automatic stride 4 and DisplayStride 4 show the same cells")
live.DisplayStride = 0
live.MaximumDisplayCells = 1048576
live.Paused = 0
Render(view)
chk.check(resets(live) == r0 and info(live, "CurrentDisplayStride") == 1, "defaults again: full resolution, no restart")
live.Reset()
Render(view)

# A flat image (no thickness), as the benchmark's: stride 4 of 60 cells = 15 cells, z extent 0.
srcf = image(60, 0)
flat = FDTDLive(Input=srcf)
flat.Backend = "CPU"
flat.SourcePosition = [0.0, 0.0, 0.0]
flat.AirPadding = 0
flat.StepsPerTick = 25
flat.UpdatePipeline()
tick(flat)
flat.Paused = 1
flat.UpdatePipeline()
full = full_copy(flat)
chk.check(full.GetExtent() == (0, 60, 0, 60, 0, 0) and step(flat) == 25, "flat image: full extent %s" % (full.GetExtent(),))
flat.DisplayStride = 4
flat.UpdatePipeline()
check_decimation(flat, full, 4, "flat 60^2")
flat.DisplayStride = 7  # 60 = 8 x 7 + 4: 9 cells of 60/9 h, the last samples cell 56
flat.UpdatePipeline()
check_decimation(flat, full, 7, "flat 60^2")
chk.check(resets(flat) == 1 and step(flat) == 25, "flat: no restart (%d, %d)" % (resets(flat), step(flat)))
Delete(flat)

# The live field equals FDTD Solver's after the same steps.
live.CourantFactor = 0.99
live.StepsPerTick = 30
Render(view)
for _ in range(4):
    tick(live, view)
ref = FDTDSolver(Input=src2)
for p in ("Backend", "SourcePosition", "SourceWaveform", "SourceFrequency"):
    setattr(ref, p, getattr(live, p))
ref.NumberOfSteps = 120
ref.SnapshotInterval = 120
ref.UpdatePipeline()
diff = np.abs(field(live) - field(ref)).max()
chk.check(step(live) == 120 and diff <= 1e-6 * max(field(ref).max(), 1e-30),
          "120 live steps equal FDTD Solver's 120 steps (max difference %.3e)" % diff)
Delete(ref)

# 3D: a slice of a live run updates with the ticks.
src3 = image(24, 24)
live3 = FDTDLive(Input=src3)
live3.Backend = "CPU"
live3.SourcePosition = [0.0, 0.0, 0.0]
live3.StepsPerTick = 10
live3.AirPadding = 4
live3.CPMLThickness = 6
sl = Slice(Input=live3)
sl.SliceType.Normal = [0, 0, 1]
sd = Show(sl, view)
Hide(live, view)
Render(view)
s0 = np.array(dsa.WrapDataObject(sm.Fetch(sl)).CellData["E_magnitude"])
tick(live3, view)
tick(live3, view)
s1 = np.array(dsa.WrapDataObject(sm.Fetch(sl)).CellData["E_magnitude"])
chk.check(step(live3) == 20 and s1.size == s0.size and s1.size > 0 and np.abs(s1 - s0).max() > 0,
          "3D: the slice changed after two ticks (step %d, %d cells)" % (step(live3), s1.size))
live3.KeepH = 1  # restarts the run
live3.UpdatePipeline()
tick(live3)
tick(live3)
live3.Paused = 1
live3.UpdatePipeline()
full = full_copy(live3)
live3.DisplayStride = 2
live3.UpdatePipeline()
check_decimation(live3, full, 2, "3D 32^3", names=("E_magnitude", "E", "H", "permittivity"))
live3.DisplayStride = 3
live3.UpdatePipeline()
check_decimation(live3, full, 3, "3D 32^3", names=("E_magnitude", "E", "H", "permittivity"))
chk.check(step(live3) == 20, "3D: DisplayStride keeps the run (step %d)" % step(live3))

# Errors: one message, empty outputs, no ticks.
bad = FDTDLive(Input=src2)
bad.Backend = "CPU"
bad.SourcePosition = [0.0, 0.0, 0.0]
bad.SMProxy.GetProperty("Polarization2D").SetElement(0, 7)
bad.SMProxy.UpdateVTKObjects()
text = update_capturing(bad)
out = sm.Fetch(bad)
chk.check(text.count("ERROR") == 1 and "Transient2dOptions::polarization (Polarization2D) = 7" in text
          and out.GetNumberOfCells() == 0 and not tick(bad),
          "Polarization2D 7: one message, empty output, no ticks (%s)" % text.strip()[-200:])
bad.SMProxy.GetProperty("Polarization2D").SetElement(0, 1)
bad.SMProxy.GetProperty("StepsPerTick").SetElement(0, 0)
bad.SMProxy.UpdateVTKObjects()
text = update_capturing(bad)
chk.check(text.count("ERROR") == 1 and "StepsPerTick = 0" in text and sm.Fetch(bad).GetNumberOfCells() == 0,
          "StepsPerTick 0: one message, empty output")
bad.SMProxy.GetProperty("StepsPerTick").SetElement(0, 10)
bad.SMProxy.GetProperty("DisplayStride").SetElement(0, -1)
bad.SMProxy.UpdateVTKObjects()
text = update_capturing(bad)
chk.check(text.count("ERROR") == 1 and "DisplayStride = -1" in text and sm.Fetch(bad).GetNumberOfCells() == 0,
          "DisplayStride -1: one message, empty output (%s)" % text.strip()[-200:])

print("%d failure(s)" % len(chk.failures))
sys.stdout.flush()
# os._exit: ParaView's teardown of the render view under Xvfb can raise GLXBadContext after the
# checks; the result is the checks'.
os._exit(1 if chk.failures else 0)
