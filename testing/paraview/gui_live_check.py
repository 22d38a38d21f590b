"""Runs inside the ParaView GUI (paraview --script=gui_live_check.py, see run_gui_live_check.sh):
loads the live-run state (VEM_LIVE_STATE, examples/fdtd2d_live.pvsm) and returns, leaving the GUI's
event loop to run; ParaView's live-source timer (pqLiveSourceBehavior, the <LiveSource> hint of
FDTD Live) then advances the run and re-renders. Writes live_ready.txt (or live_ready.txt with a
FAIL line) into $VEM_GUI_OUT."""
import os

out = os.environ.get("VEM_GUI_OUT", os.getcwd())
lines = []
try:
    from paraview.simple import *  # noqa: F401,F403
    LoadState(os.environ["VEM_LIVE_STATE"])
    live = FindSource("FDTDLive")
    view = GetActiveViewOrCreate("RenderView")
    view.ViewSize = [900, 700]
    Render(view)
    proto = live.SMProxy.GetHints()
    ok = live is not None and proto is not None and proto.FindNestedElementByName("LiveSource") is not None
    lines.append(("PASS " if ok else "FAIL ") + "FDTDLive loaded from the state, with the LiveSource hint")
except Exception as e:  # any failure is a test failure
    import traceback
    lines.append("FAIL exception: " + "".join(traceback.format_exception(e)))
with open(os.path.join(out, "live_ready.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
