"""Driving an FDTD Live filter from pvpython: what ParaView's GUI does on its live-source timer
(pqLiveSourceBehavior: GetNeedsUpdate() on the filter, then MarkModified on the proxy and a
render), as a function to call in a loop.

    from voxelem_live import tick
    live = FDTDLive(Input=model)
    view = GetActiveViewOrCreate('RenderView'); Show(live, view)
    while tick(live, view):      # StepsPerTick steps and one render per call
        ...

The filter's VTK class has no Python wrapping (ParaView plugins get client-server wrapping only),
so this goes through the proxy: the information property Running and the command Tick.
tick() returns False when the filter does not need an update (paused, at MaximumSteps, failed).
Without a view it only updates the pipeline (the solver without display).
"""


def info(proxy, name):
    """An information property of the filter (CurrentStep, Running, NumberOfResets, ...), fresh."""
    proxy.SMProxy.UpdatePropertyInformation(proxy.SMProxy.GetProperty(name))
    return proxy.SMProxy.GetProperty(name).GetElement(0)


def needs_update(proxy):
    """What vtkVEMFDTDLive::GetNeedsUpdate answers the GUI: true while the run ticks (started,
    not paused, below MaximumSteps, no error); then requests the tick (the Tick command)."""
    if not info(proxy, "Running"):
        return False
    proxy.SMProxy.InvokeCommand("Tick")
    return True


def tick(proxy, view=None):
    """One tick: True when the filter advanced (and the view was rendered)."""
    from paraview import simple
    if not needs_update(proxy):
        return False
    proxy.SMProxy.MarkModified(proxy.SMProxy)
    if view is not None:
        simple.Render(view)
    else:
        proxy.UpdatePipeline()
    return True


def run_ticks(proxy, count, view=None):
    """Up to `count` ticks; returns how many advanced."""
    n = 0
    for _ in range(count):
        if not tick(proxy, view):
            break
        n += 1
    return n
