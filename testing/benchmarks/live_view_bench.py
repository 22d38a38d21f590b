"""The live mode's frame rate (issue 14): FDTD Live on an L x L 2D model (TM, CW point source,
CPML), StepsPerTick steps per tick, measured three ways in one pvpython session:
  (the filter's DisplayStride / MaximumDisplayCells as given, default automatic: a 4096^2 run shows
  1024^2; output: the filter's LastOutputSeconds, building the displayed arrays and the probe table)
  solver:   the engine's time for the tick's steps (the filter's LastTickSeconds);
  no view:  tick + UpdatePipeline (steps and the output arrays, nothing rendered);
  view:     tick + Render of a render view colouring E_magnitude (what the GUI does per tick).
The display cost is (view - solver) / view, i.e. the share of wall time not spent stepping.
    xvfb-run -a pvpython --force-offscreen-rendering live_view_bench.py --plugin VoxelEMPlugin.so \
        --sizes 1024 2048 4096 --steps-per-tick 50 --ticks 5 --json out.json
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

from paraview.simple import *  # noqa: F401,F403

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonDataModel import vtkImageData

ap = argparse.ArgumentParser()
ap.add_argument("--plugin", required=True)
ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096])
ap.add_argument("--steps-per-tick", type=int, default=50)
ap.add_argument("--ticks", type=int, default=5)
ap.add_argument("--backend", default="Auto")
ap.add_argument("--json", default=None)
ap.add_argument("--representation", default="Slice", help="Slice (image texture) or Surface (polygons)")
ap.add_argument("--keep-e", type=int, default=0, help="also output the E vector (KeepE)")
ap.add_argument("--display-stride", type=int, default=None,
                help="FDTD Live's DisplayStride (0 = automatic, 1 = full resolution; default: the filter's)")
ap.add_argument("--max-display-cells", type=int, default=None, help="FDTD Live's MaximumDisplayCells")
args = ap.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
from voxelem_live import info, tick  # noqa: E402

results = []
view = CreateView("RenderView")
view.ViewSize = [1024, 1024]
for L in args.sizes:
    h = 1e-3
    img = vtkImageData()
    img.SetDimensions(L + 1, L + 1, 1)
    img.SetSpacing(h, h, h)
    img.SetOrigin(-L * h / 2, -L * h / 2, 0)
    for name, v in (("permittivity", 1.0), ("conductivity", 0.0)):
        a = numpy_to_vtk(np.full(img.GetNumberOfCells(), v, dtype=np.float32), deep=1)
        a.SetName(name)
        img.GetCellData().AddArray(a)
    src = TrivialProducer()
    src.GetClientSideObject().SetOutput(img)
    live = FDTDLive(Input=src)
    live.Backend = args.backend
    live.SourcePosition = [0.0, 0.0, 0.0]
    live.SourceWaveform = "Sinusoid (CW, smooth ramp)"
    live.SourceFrequency = 10e9
    live.StepsPerTick = args.steps_per_tick
    live.AirPadding = 0
    live.KeepMaterials = 0
    live.KeepE = args.keep_e
    if args.display_stride is not None:
        live.DisplayStride = args.display_stride
    if args.max_display_cells is not None:
        live.MaximumDisplayCells = args.max_display_cells
    live.UpdatePipeline()
    cells = (L + 20) ** 2  # + the CPML

    def measure(view_or_none):
        tick(live, view_or_none)  # warm-up (first allocation of the output)
        wall, solver, output = 0.0, 0.0, 0.0
        for _ in range(args.ticks):
            t = time.perf_counter()
            tick(live, view_or_none)
            wall += time.perf_counter() - t
            solver += info(live, "LastTickSeconds")
            output += info(live, "LastOutputSeconds")
        return wall / args.ticks, solver / args.ticks, output / args.ticks

    nv_wall, nv_solver, nv_output = measure(None)
    d = Show(live, view)
    d.Representation = args.representation
    ColorBy(d, ("CELLS", "E_magnitude"))
    ResetCamera(view)
    Render(view)
    v_wall, v_solver, v_output = measure(view)
    stride = info(live, "CurrentDisplayStride")
    shown = live.GetDataInformation().GetNumberOfCells()
    Hide(live, view)
    r = dict(L=L, cells=cells, steps_per_tick=args.steps_per_tick, ticks=args.ticks,
             backend=live.GetPropertyValue("Backend") if False else args.backend,
             solver_s_per_tick=v_solver, no_view_s_per_tick=nv_wall, view_s_per_tick=v_wall,
             solver_mcells_s=cells * args.steps_per_tick / v_solver / 1e6,
             view_mcells_s=cells * args.steps_per_tick / v_wall / 1e6,
             view_fps=1.0 / v_wall, no_view_fps=1.0 / nv_wall,
             display_cost=(v_wall - v_solver) / v_wall,
             display_cost_vs_no_view=(v_wall - nv_wall) / v_wall,
             representation=args.representation, keep_e=args.keep_e,
             output_s_per_tick=v_output, display_stride=stride, displayed_cells=shown,
             max_display_cells=live.MaximumDisplayCells)
    print(json.dumps(r))
    sys.stdout.flush()
    results.append(r)
    Delete(live)
    Delete(src)

meta = dict(host=platform.node(), cpu=platform.processor() or platform.machine(),
            cores=os.cpu_count(), omp_threads=os.environ.get("OMP_NUM_THREADS"),
            commit=subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                  cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip(),
            date=time.strftime("%Y-%m-%d %H:%M:%S"), results=results)
if args.json:
    with open(args.json, "w") as f:
        json.dump(meta, f, indent=1)
sys.stdout.flush()
os._exit(0)
