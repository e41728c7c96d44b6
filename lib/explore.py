"""Sliders for T (loops) and n (input length) over cached runs, for JupyterLab.

The drawing is done by pure render functions in `plots.py` (what papermill and nbval see, called
once statically by each notebook); this module only wires ipywidgets to them. Notebooks call
`explorer(...)` in a cell guarded by `INTERACTIVE and not headless()`, so batch runs stay clean.
"""
from __future__ import annotations

import os


def headless() -> bool:
    """True under the project's batch runners (papermill main job, nbval in `make test`)."""
    return os.environ.get("LOOPS_HEADLESS", "") == "1"


def explorer(runs: dict, T: int, n: int, render, value: str | None = None, T_max: int = 64, n_max: int = 32):
    """A run chooser and T / n sliders redrawing `render(run, T=..., n=...) -> (fig, readout)`.

    runs: label -> Run; value: the label shown first. Returns the widget box to display."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    choose = w.Dropdown(options=list(runs), value=value if value in runs else next(iter(runs)), description="run",
                        layout=w.Layout(width="34em"))      # wide enough to tell contract and seed apart
    t_slider = w.IntSlider(value=T, min=1, max=T_max, description="T (loops)", continuous_update=False)
    n_slider = w.IntSlider(value=n, min=1, max=n_max, description="n (length)", continuous_update=False)
    readout = w.Label(layout=w.Layout(width="100%"))
    out = w.Output()

    from IPython.display import display

    def fit_T_to_run(*_):
        model = runs[choose.value].model
        t_slider.max = T_max if model.tied else model.cfg.n_blocks     # an untied model has only its blocks

    def redraw(*_):
        with out:
            out.clear_output(wait=True)
            fig, text = render(runs[choose.value], T=t_slider.value, n=n_slider.value)
            display(fig)
            plt.close(fig)
        readout.value = text

    choose.observe(fit_T_to_run, names="value")
    for widget in (choose, t_slider, n_slider):
        widget.observe(redraw, names="value")
    fit_T_to_run()
    redraw()
    return w.VBox([w.HBox([choose, t_slider, n_slider]), readout, out])
