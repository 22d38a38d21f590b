"""The Takada benchmark in ParaView (issue 14; ../shared/papers/fdtd2d-cuda-takada-ja.md): a
sinusoidal point source (a line current in 2D, TM: Ez) in the centre of a PEC-bounded square of
vacuum, run by FDTD Solver on a flat L x L image, Ez at the last step rendered to a PNG.

    xvfb-run -a pvpython --force-offscreen-rendering examples/fdtd2d_takada_point_source.py \
        --plugin VoxelEMPlugin.so [--size 256] [--steps 600] [--backend cpu] [--out DIR]

Defaults: 256 x 256 cells of 1 mm, 10 GHz (30 cells per wavelength), 600 steps: the waves have
reflected off the PEC walls and form the square's interference pattern.
"""
import argparse
import os
import time

from paraview.simple import *  # noqa: F401,F403
from paraview import servermanager as sm

import numpy as np
from vtkmodules.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonDataModel import vtkImageData

ap = argparse.ArgumentParser()
ap.add_argument("--plugin", required=True)
ap.add_argument("--size", type=int, default=256)
ap.add_argument("--steps", type=int, default=600)
ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
args = ap.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())

L, h = args.size, 1e-3
img = vtkImageData()
img.SetDimensions(L + 1, L + 1, 1)  # flat: one point along z -> a 2D model in the xy plane
img.SetSpacing(h, h, h)
img.SetOrigin(-L * h / 2, -L * h / 2, 0.0)
for name, v in (("permittivity", 1.0), ("conductivity", 0.0)):
    a = numpy_to_vtk(np.full(img.GetNumberOfCells(), v), deep=1)
    a.SetName(name)
    img.GetCellData().AddArray(a)
model = TrivialProducer(registrationName="Square")
model.GetClientSideObject().SetOutput(img)

f = FDTDSolver(registrationName="Takada", Input=model)
f.Backend = {"auto": "Auto", "cpu": "CPU", "cuda": "CUDA"}[args.backend]
for face in ("XLowBoundary", "XHighBoundary", "YLowBoundary", "YHighBoundary"):
    setattr(f, face, "PEC")
f.AirPadding = 0
f.Polarization2D = "TM (E normal to the plane)"
f.SourceWaveform = "Sinusoid (CW, smooth ramp)"
f.SourceFrequency = 10e9
f.SourcePosition = [0.0, 0.0, 0.0]
f.SourcePolarization = [0.0, 0.0, 1.0]
f.NumberOfSteps = args.steps
f.SnapshotInterval = args.steps
f.KeepH = 0
t = time.time()
f.UpdatePipeline()
sec = time.time() - t
obj = sm.Fetch(f)
ez = dsa.WrapDataObject(obj).CellData["E"][:, 2]
print("Takada square %d x %d, %d steps in %.2f s (%.1f Mcells/s incl. output), backend %s, max |Ez| %.3g V/m"
      % (L, L, args.steps, sec, L * L * args.steps / sec / 1e6,
         obj.GetFieldData().GetAbstractArray("backend").GetValue(0), np.abs(ez).max()))

calc = Calculator(registrationName="Ez", Input=f, AttributeType="Cell Data", ResultArrayName="Ez", Function="E_Z")
view = CreateView("RenderView")
view.ViewSize = [800, 760]
view.OrientationAxesVisibility = 0
d = Show(calc, view)
d.Representation = "Surface"
ColorBy(d, ("CELLS", "Ez"))
lut = GetColorTransferFunction("Ez")
lut.ApplyPreset("Cool to Warm", True)
m = float(np.abs(ez).max()) or 1.0
lut.RescaleTransferFunction(-0.5 * m, 0.5 * m)
d.SetScalarBarVisibility(view, True)
text = Text(registrationName="Title", Text="Takada benchmark: TM point source in a PEC square, %d x %d, step %d"
            % (L, L, args.steps))
Show(text, view).FontSize = 14
view.InteractionMode = "2D"
view.CameraPosition = [0, 0, 1]
view.CameraViewUp = [0, 1, 0]
ResetCamera(view)
png = os.path.join(args.out, "fdtd2d_takada_point_source.png")
SaveScreenshot(png, view, ImageResolution=[800, 760])
print("wrote", png)
