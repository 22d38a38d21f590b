"""Writes examples/fdtd2d_live.pvsm: a ParaView state that starts a live 2D FDTD run in the GUI.

An axial slice of the procedural head (Head Phantom, 200 x 200 x 1 voxels of 1.5 mm, one voxel
thick: a 2D model), its tissues at 900 MHz (Tissue Properties), and FDTD Live: TM, a 900 MHz CW
line source 2 cm beside the right ear, 20 steps per tick, |E| coloured on a log scale. Open it
with the plugin loaded (PV_PLUGIN_PATH or Tools > Manage Plugins):

    paraview --state=examples/fdtd2d_live.pvsm

and the wave spreads through the head as ParaView's live-source timer ticks (pause with the
filter's Paused box, Reset to start again).

    pvpython examples/fdtd2d_live_state.py --plugin VoxelEMPlugin.so [--out examples/fdtd2d_live.pvsm]
"""
import argparse
import os

from paraview.simple import *  # noqa: F401,F403

ap = argparse.ArgumentParser()
ap.add_argument("--plugin", required=True)
ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "fdtd2d_live.pvsm"))
args = ap.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())


def build(view=None):
    phantom = HeadPhantom(registrationName="HeadSlice", Dimensions=[200, 200, 1],
                          Spacing=[0.0015, 0.0015, 0.0015], Origin=[-0.15, -0.15, 0.0])
    tissues = TissueProperties(registrationName="Tissues", Input=phantom)
    tissues.UpdatePipeline()
    live = FDTDLive(registrationName="FDTDLive", Input=tissues)
    live.Backend = "Auto"
    live.Polarization2D = "TM (E normal to the plane)"
    live.SourceWaveform = "Sinusoid (CW, smooth ramp)"
    live.SourceFrequency = 900e6
    live.SourcePosition = [0.12, 0.0, 0.00075]
    live.SourcePolarization = [0.0, 0.0, 1.0]
    live.SourceAmplitude = 1.0
    live.AirPadding = 6
    live.CPMLThickness = 10
    live.StepsPerTick = 20
    view = view or GetActiveViewOrCreate("RenderView")
    d = Show(live, view)
    d.Representation = "Surface"
    ColorBy(d, ("CELLS", "E_magnitude"))
    lut = GetColorTransferFunction("E_magnitude")
    lut.ApplyPreset("Inferno (matplotlib)", True)
    lut.UseLogScale = 1
    lut.AutomaticRescaleRangeMode = "Never"
    lut.RescaleTransferFunction(1e-1, 1e3)
    d.SetScalarBarVisibility(view, True)
    outline = Show(Contour(registrationName="HeadOutline",
                           Input=CellDatatoPointData(registrationName="TissuePoints", Input=tissues),
                           ContourBy=["POINTS", "permittivity"], Isosurfaces=[2.0]), view)
    outline.AmbientColor = outline.DiffuseColor = [0.3, 0.9, 1.0]
    outline.LineWidth = 2.0
    outline.Representation = "Wireframe"
    view.InteractionMode = "2D"
    view.CameraPosition = [0.0, 0.0, 1.0]
    view.CameraFocalPoint = [0.0, 0.0, 0.0]
    view.CameraViewUp = [0.0, 1.0, 0.0]
    ResetCamera(view)
    SetActiveSource(live)
    return live, view


if __name__ == "__main__":
    live, view = build()
    Render(view)
    SaveState(args.out)
    print("wrote", args.out)
