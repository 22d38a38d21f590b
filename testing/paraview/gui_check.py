"""Runs inside the ParaView GUI (paraview --script=gui_check.py, see run_gui_check.sh).

The plugin must already be loaded - run_gui_check.sh sets PV_PLUGIN_PATH, so this also checks that
the GUI autoloads it from there. Checks that Head Phantom, Tissue Properties, FDTD Solver and FDTD
Steady State are in the VoxelEM menu, applies HeadPhantom -> TissueProperties -> FDTDSolver (small,
CPU), shows |E| on a slice in the GUI's render view, saves the view, and writes gui_check.txt
(PASS/FAIL lines) into $VEM_GUI_OUT. Exits the GUI with status 0 when every check passed, 1 otherwise.
"""
import math
import os

out = os.environ.get("VEM_GUI_OUT", os.getcwd())
os.makedirs(out, exist_ok=True)
lines = []
ok = True


def check(cond, what):
    global ok
    lines.append(("PASS " if cond else "FAIL ") + what)
    ok = ok and bool(cond)


try:
    from paraview.simple import *  # noqa: F401,F403
    from paraview import servermanager

    pm = servermanager.ProxyManager()
    for group, name in (("sources", "VEMHeadPhantom"), ("filters", "VEMTissueProperties"),
                        ("filters", "VEMFDTDSolver"), ("filters", "VEMFDTDSteadyState")):
        proto = pm.SMProxyManager.GetPrototypeProxy(group, name)
        check(proto is not None, f"{name} registered by the autoloaded plugin")
        hints = proto.GetHints() if proto is not None else None
        menu = hints.FindNestedElementByName("ShowInMenu") if hints is not None else None
        check(menu is not None and menu.GetAttribute("category") == "VoxelEM", f"{name} in menu VoxelEM")

    phantom = HeadPhantom(registrationName="HeadPhantom", Dimensions=[48, 48, 24],
                          Spacing=[0.0055, 0.0055, 0.007], Origin=[-0.132, -0.132, -0.095])
    phantom.UpdatePipeline()  # so the array selectors below see the arrays
    tissues = TissueProperties(registrationName="TissueProperties", Input=phantom)
    tissues.UpdatePipeline()
    fdtd = FDTDSolver(registrationName="FDTDSolver", Input=tissues)
    check(list(fdtd.PermittivityArray) == ["CELLS", "permittivity"], f"default permittivity array {list(fdtd.PermittivityArray)}")
    check(list(fdtd.ConductivityArray) == ["CELLS", "conductivity"], f"default conductivity array {list(fdtd.ConductivityArray)}")
    fdtd.Backend = "Auto"
    fdtd.NumberOfSteps = 240
    fdtd.SnapshotInterval = 40
    fdtd.AirPadding = 4
    fdtd.CPMLThickness = 6
    fdtd.SourcePosition = [0.1, 0.0, -0.01]
    fdtd.SourceWaveform = "Sinusoid (CW, smooth ramp)"
    view = GetActiveViewOrCreate("RenderView")
    scene = GetAnimationScene()
    scene.UpdateAnimationUsingDataTimeSteps()
    times = list(fdtd.TimestepValues)
    check(len(times) == 6, f"time steps in the VCR controls: {len(times)}")
    scene.AnimationTime = times[-1]
    logE = Calculator(registrationName="log10E", Input=fdtd)
    logE.AttributeType = "Cell Data"
    logE.ResultArrayName = "log10_E"
    logE.Function = "log10(max(E_magnitude, 1e-30))"
    sl = Slice(registrationName="Slice", Input=logE)
    sl.SliceType.Origin = [0.0, 0.0, -0.01]
    sl.SliceType.Normal = [0.0, 0.0, 1.0]
    sd = Show(sl, view)
    ColorBy(sd, ("CELLS", "log10_E"))
    lut = GetColorTransferFunction("log10_E")
    lut.ApplyPreset("Inferno (matplotlib)", True)
    rng = sl.CellData["log10_E"].GetRange()
    lut.RescaleTransferFunction(max(rng[0], rng[1] - 3.0), rng[1])
    sd.SetScalarBarVisibility(view, True)
    ph = Show(Contour(registrationName="HeadSurface",
                      Input=CellDatatoPointData(registrationName="Points", Input=tissues),
                      ContourBy=["POINTS", "permittivity"], Isosurfaces=[2.0]), view)
    ph.Opacity = 0.3
    view.CameraPosition = [0.35, -0.45, 0.45]
    view.CameraFocalPoint = [0.0, 0.0, -0.01]
    view.CameraViewUp = [0.0, 0.0, 1.0]
    ResetCamera(view)
    SetActiveSource(fdtd)  # its properties panel in the GUI
    Render(view)
    emax = fdtd.CellData["E_magnitude"].GetRange()[1]
    check(math.isfinite(emax) and emax > 0, f"FDTD field in the GUI: max |E| = {emax:.3g} V/m")
    SaveScreenshot(os.path.join(out, "gui_view.png"), view, ImageResolution=[800, 600])
    check(os.path.getsize(os.path.join(out, "gui_view.png")) > 10000, "view screenshot written")
except Exception as e:  # any failure is a test failure
    import traceback
    lines.append("FAIL exception: " + "".join(traceback.format_exception(e)))
    ok = False

with open(os.path.join(out, "gui_check.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
if os.environ.get("VEM_GUI_KEEP_OPEN"):
    pass  # leave the GUI running (for a screenshot of the whole window)
else:
    os._exit(0 if ok else 1)
