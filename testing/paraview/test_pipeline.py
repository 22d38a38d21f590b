"""pvpython test of the VoxelEM plugin: HeadPhantom -> TissueProperties -> FDTDSolver on the CPU.

Checks the pvpython names, documentation and groups of the proxies (FDTDSteadyState's too), array names and ranges, the
time steps, that moving through time reads cached snapshots (one solve), finite non-zero field
energy, the probe table, and that a slice and a volume rendering of |E| show the field (pixels).

  xvfb-run -a pvpython --force-offscreen-rendering test_pipeline.py --plugin VoxelEMPlugin.so --out DIR
"""
import argparse
import math
import os
import sys

from paraview.simple import *  # noqa: F401,F403
from paraview import servermanager

import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOImage import vtkPNGReader

failures = []


def check(cond, what):
    print(("PASS " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def png_pixels(path):
    r = vtkPNGReader()
    r.SetFileName(path)
    r.Update()
    img = r.GetOutput()
    nx, ny, _ = img.GetDimensions()
    a = vtk_to_numpy(img.GetPointData().GetScalars()).reshape(ny, nx, -1)[:, :, :3].astype(int)
    return a


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    LoadPlugin(args.plugin, remote=False, ns=globals())
    for name in ("HeadPhantom", "TissueProperties", "FDTDSolver", "FDTDSteadyState"):
        check(name in globals(), f"pvpython name {name} exists")

    # --- Proxies: every property documented; groups present; advanced ones marked. ------------
    phantom = HeadPhantom(Dimensions=[40, 40, 20], Spacing=[0.0066, 0.0066, 0.0084],
                          Origin=[-0.132, -0.132, -0.095])
    tissues = TissueProperties(Input=phantom, Frequency=900e6)
    fdtd = FDTDSolver(Input=tissues)
    steady = FDTDSteadyState(Input=tissues)
    for proxy in (phantom, tissues, fdtd, steady):
        sm = proxy.SMProxy
        undocumented = []
        it = sm.NewPropertyIterator()
        it.Begin()
        while not it.IsAtEnd():
            prop = it.GetProperty()
            key = it.GetKey()
            doc = prop.GetDocumentation()
            if not prop.GetInformationOnly() and key != "Input" and (doc is None or not doc.GetDescription()):
                undocumented.append(key)
            it.Next()
        check(not undocumented, f"{sm.GetXMLName()}: every property documented {undocumented}")
        check(sm.GetNumberOfPropertyGroups() >= 1, f"{sm.GetXMLName()}: has property groups")
    check(fdtd.GetProperty("DeviceIndex").GetPanelVisibility() == "advanced", "DeviceIndex is advanced")
    check(steady.GetProperty("DeviceIndex").GetPanelVisibility() == "advanced", "DeviceIndex is advanced (steady state)")
    Delete(steady)
    del steady

    # --- Phantom and tissue properties ---------------------------------------------------------
    full = HeadPhantom()
    full.UpdatePipeline()
    labels = vtk_to_numpy(servermanager.Fetch(full).GetCellData().GetArray("tissue"))
    check(labels.size == 128 * 128 * 64, "default phantom is 128 x 128 x 64 voxels")
    check(len(np.unique(labels)) == 14, f"default phantom has 14 tissues ({len(np.unique(labels))})")
    Delete(full)

    tissues.UpdatePipeline()
    cd = tissues.CellData
    check(set(["tissue", "permittivity", "conductivity", "density"]) <= set(cd.keys()),
          f"tissue arrays {cd.keys()}")
    er, sr, dr = cd["permittivity"].GetRange(), cd["conductivity"].GetRange(), cd["density"].GetRange()
    check(abs(er[0] - 1.0) < 1e-6 and 60 < er[1] < 70, f"permittivity range {er}")
    check(sr[0] == 0.0 and 2.0 < sr[1] < 2.6, f"conductivity range {sr} (CSF 2.41 S/m at 900 MHz)")
    check(1.0 < dr[0] < 1.3 and 1800 < dr[1] < 2000, f"density range {dr}")

    # --- FDTD ---------------------------------------------------------------------------------
    fdtd.Backend = "CPU"
    fdtd.NumberOfSteps = 160
    fdtd.SnapshotInterval = 40
    fdtd.AirPadding = 4
    fdtd.CPMLThickness = 6
    fdtd.SourcePosition = [0.1, 0.0, -0.01]
    fdtd.SourceWaveform = "Sinusoid (CW, smooth ramp)"
    fdtd.ProbePositions = [0.05, 0.0, 0.0]
    fdtd.UpdatePipelineInformation()
    times = list(fdtd.TimestepValues)
    check(len(times) == 4, f"4 time steps announced ({len(times)})")
    fdtd.UpdatePipeline(times[-1])
    fdtd.UpdatePropertyInformation()
    dt = fdtd.GetProperty("TimeStep").GetElement(0)
    check(dt > 0 and abs(times[0] - 40 * dt) < 1e-6 * dt, f"time steps are multiples of dt = {dt}")
    keys = fdtd.CellData.keys()
    check(set(["E", "E_magnitude", "permittivity", "conductivity"]) <= set(keys), f"field arrays {keys}")
    check(fdtd.CellData["E"].GetNumberOfComponents() == 3, "E has 3 components")
    data = servermanager.Fetch(fdtd)
    E = vtk_to_numpy(data.GetCellData().GetArray("E")).astype(float)
    eps = vtk_to_numpy(data.GetCellData().GetArray("permittivity")).astype(float)
    energy = float(np.sum(eps * np.sum(E * E, axis=1)))
    check(math.isfinite(energy) and energy > 0, f"finite non-zero field energy ({energy:.3e})")
    check(data.GetDimensions() == (49, 49, 29), f"output grid = voxels + padding {data.GetDimensions()}")
    mags = []
    for t in times:
        fdtd.UpdatePipeline(t)
        mags.append(fdtd.CellData["E_magnitude"].GetRange()[1])
    fdtd.UpdatePropertyInformation()
    solves = fdtd.GetProperty("NumberOfSolves").GetElement(0)
    check(solves == 1, f"scrubbing reads cached snapshots (solves = {solves})")
    check(len(set(mags)) == len(mags), f"snapshots differ {mags}")

    table = servermanager.Fetch(fdtd, idx=1)
    check(table.GetNumberOfRows() == 160, f"probe table has one row per step ({table.GetNumberOfRows()})")
    cols = [table.GetColumnName(i) for i in range(table.GetNumberOfColumns())]
    check("source_Ez" in cols and "probe0_Ez" in cols and "time" in cols, f"probe columns {cols}")

    # --- Rendering: slice and volume show the field --------------------------------------------
    fdtd.UpdatePipeline(times[-1])
    view = CreateView("RenderView")
    view.ViewSize = [600, 500]
    view.Background = [0.0, 0.0, 0.0]
    try:
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    view.OrientationAxesVisibility = 0
    scene = GetAnimationScene()
    scene.UpdateAnimationUsingDataTimeSteps()
    scene.AnimationTime = times[-1]
    view.ViewTime = times[-1]
    logE = Calculator(Input=fdtd)
    logE.AttributeType = "Cell Data"
    logE.ResultArrayName = "log10_E"
    logE.Function = "log10(max(E_magnitude, 1e-30))"
    sl = Slice(Input=logE)
    sl.SliceType.Origin = [0.0, 0.0, -0.01]
    sl.SliceType.Normal = [0.0, 0.0, 1.0]
    sd = Show(sl, view)
    ColorBy(sd, ("CELLS", "log10_E"))
    lut = GetColorTransferFunction("log10_E")
    emag = np.sqrt(np.sum(E * E, axis=1))
    top, low = float(np.percentile(emag, 99.5)), float(np.percentile(emag, 10))
    lut.ApplyPreset("Inferno (matplotlib)", True)
    lut.AutomaticRescaleRangeMode = "Never"
    lut.RescaleTransferFunction(math.log10(low), math.log10(top))
    print(f"colour range log10 |E| {math.log10(low):.2f} .. {math.log10(top):.2f}, max |E| {mags[-1]:.3g} V/m")
    view.CameraPosition = [0, 0, 1.0]
    view.CameraFocalPoint = [0, 0, -0.01]
    view.CameraViewUp = [0, 1, 0]
    ResetCamera(view)
    Render(view)
    slice_png = os.path.join(args.out, "slice.png")
    SaveScreenshot(slice_png, view, ImageResolution=[600, 500])
    px = png_pixels(slice_png)
    lit = np.mean(np.any(px > 20, axis=2))
    colours = len(np.unique(px.reshape(-1, 3) // 8, axis=0))
    check(lit > 0.15, f"slice: {lit:.0%} of the pixels are lit")
    check(colours > 20, f"slice: {colours} distinct colours (a field, not a flat patch)")
    # Right half (the source side, +x) brighter than the left half (shadow of the head).
    h = px.shape[1] // 2
    check(px[:, h:].mean() > px[:, :h].mean(), "slice: brighter on the source side")

    Hide(sl, view)
    vd = Show(logE, view)
    ColorBy(vd, ("CELLS", "log10_E"))
    vd.SetRepresentationType("Volume")
    lo, hi = math.log10(low), math.log10(top)
    pwf = GetOpacityTransferFunction("log10_E")
    pwf.Points = [lo, 0.0, 0.5, 0.0, 0.5 * (lo + hi), 0.05, 0.5, 0.0, hi, 0.6, 0.5, 0.0]
    pwf.RescaleTransferFunction(lo, hi)
    view.CameraPosition = [0.5, 0.4, 0.3]
    view.CameraFocalPoint = [0, 0, 0]
    view.CameraViewUp = [0, 0, 1]
    ResetCamera(view)
    Render(view)
    volume_png = os.path.join(args.out, "volume.png")
    SaveScreenshot(volume_png, view, ImageResolution=[600, 500])
    pv = png_pixels(volume_png)
    vlit = np.mean(np.any(pv > 20, axis=2))
    check(0.01 < vlit, f"volume: {vlit:.1%} of the pixels are lit")

    print(f"screenshots: {slice_png}, {volume_png}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
