"""The Humphrey picture in ParaView (issue 14; ../shared/papers/fdtd2d-gpu-humphrey.md): a TF/SF
plane wave (TM: Ez) on a dielectric circular cylinder, FDTD Solver on a flat image with the
cylinder's permittivity, Ez of the total field (inside the box) and the scattered field (outside)
rendered to a PNG.

    xvfb-run -a pvpython --force-offscreen-rendering examples/fdtd2d_humphrey_cylinder.py \
        --plugin VoxelEMPlugin.so [--size 240] [--steps 700] [--backend cpu] [--out DIR]

Defaults: 240 x 240 cells of 1 mm, a cylinder of radius 30 mm with eps_r 4, a 10 GHz sinusoidal
plane wave travelling along +x (IncidentAngle2D 0; 30 cells per wavelength in vacuum).
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
ap.add_argument("--size", type=int, default=240)
ap.add_argument("--steps", type=int, default=700)
ap.add_argument("--angle", type=float, default=0.0)
ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
args = ap.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())

L, h, radius = args.size, 1e-3, 0.03
img = vtkImageData()
img.SetDimensions(L + 1, L + 1, 1)
img.SetSpacing(h, h, h)
img.SetOrigin(-L * h / 2, -L * h / 2, 0.0)
c = (np.arange(L) + 0.5) * h - L * h / 2
X, Y = np.meshgrid(c, c)  # x fastest, as VTK's cell order
eps = np.where(X ** 2 + Y ** 2 < radius ** 2, 4.0, 1.0).ravel()
for name, v in (("permittivity", eps), ("conductivity", np.zeros_like(eps))):
    a = numpy_to_vtk(np.ascontiguousarray(v), deep=1)
    a.SetName(name)
    img.GetCellData().AddArray(a)
model = TrivialProducer(registrationName="Cylinder")
model.GetClientSideObject().SetOutput(img)

f = FDTDSolver(registrationName="Humphrey", Input=model)
f.Backend = {"auto": "Auto", "cpu": "CPU", "cuda": "CUDA"}[args.backend]
f.Illumination = "Plane wave"
f.IncidentAngle2D = args.angle
f.IncidentAmplitude = 1.0
f.Polarization2D = "TM (E normal to the plane)"
f.SourceWaveform = "Sinusoid (CW, smooth ramp)"
f.SourceFrequency = 10e9
f.AirPadding = 12
f.CPMLThickness = 12
f.NumberOfSteps = args.steps
f.SnapshotInterval = args.steps
t = time.time()
f.UpdatePipeline()
sec = time.time() - t
obj = sm.Fetch(f)
ez = dsa.WrapDataObject(obj).CellData["E"][:, 2]
print("Humphrey cylinder %d x %d (+ padding), %d steps in %.2f s, backend %s, max |Ez| %.3g V/m"
      % (L, L, args.steps, sec, obj.GetFieldData().GetAbstractArray("backend").GetValue(0), np.abs(ez).max()))

calc = Calculator(registrationName="Ez", Input=f, AttributeType="Cell Data", ResultArrayName="Ez", Function="E_Z")
view = CreateView("RenderView")
view.ViewSize = [800, 760]
view.OrientationAxesVisibility = 0
d = Show(calc, view)
d.Representation = "Surface"
ColorBy(d, ("CELLS", "Ez"))
lut = GetColorTransferFunction("Ez")
lut.ApplyPreset("Cool to Warm", True)
lut.RescaleTransferFunction(-1.5, 1.5)
d.SetScalarBarVisibility(view, True)
ring = Show(Contour(registrationName="CylinderEdge", Input=CellDatatoPointData(Input=model),
                    ContourBy=["POINTS", "permittivity"], Isosurfaces=[2.5]), view)
ring.AmbientColor = ring.DiffuseColor = [0.1, 0.1, 0.1]
ring.LineWidth = 2.0
Show(Text(Text="Humphrey: TF/SF plane wave (TM, 10 GHz) on an eps_r 4 cylinder, step %d" % args.steps),
     view).FontSize = 14
view.InteractionMode = "2D"
view.CameraPosition = [0, 0, 1]
view.CameraViewUp = [0, 1, 0]
ResetCamera(view)
png = os.path.join(args.out, "fdtd2d_humphrey_cylinder.png")
SaveScreenshot(png, view, ImageResolution=[800, 760])
print("wrote", png)
