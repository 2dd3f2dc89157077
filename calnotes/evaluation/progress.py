"""The clock and the progress bar of one :func:`calnotes.evaluate` call."""

from __future__ import annotations

import sys
import time

import numpy as np


#: The parts of a report whose time :attr:`EvaluationReport.timings` gives, in order (a part
#: that did not run is absent; ``total`` is the wall time of :func:`evaluate`).
TIMED_PARTS = {
    "loading": "reading and validating the input (calnotes.as_predictions)",
    "scores": "accuracy, confidences and the proper scores",
    "binned_rows": "binned values and what the next three parts do not cover",
    "references": "calibrated references of the binned rows",
    "p_values": "p-values under the calibrated null (exact brackets and Monte Carlo)",
    "intervals": "bootstrap intervals",
    "smooth_ece": "SmoothECE rows",
    "utility": "utility calibration",
    "writing": "report files and figures (EvaluationReport.write; not in its report.json)",
    "total": "wall time of evaluate (and of write, once written)",
}


#: Inputs of at least this many entries (n x k) get a progress bar by default when standard
#: error is a terminal (about a second of work); ``progress=True`` / ``False`` forces it on or
#: off.
PROGRESS_ENTRIES = 2_000_000


_PROGRESS_NAME = "progress (command line: --progress / --no-progress)"


def _check_progress(progress) -> bool | None:
    """``progress`` as ``True``, ``False`` or ``None`` (automatic), or a clear error."""
    if progress is None or isinstance(progress, (bool, np.bool_)):
        return None if progress is None else bool(progress)
    raise TypeError(f"{_PROGRESS_NAME}: expected True, False or None (automatic: a bar on a"
                    f" terminal for inputs of at least {PROGRESS_ENTRIES:,} probabilities),"
                    f" got {progress!r}")


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):        # replaced or closed
        return False


def _shows_progress(progress: bool | None, entries: int) -> bool:
    """Whether to show the bar: as asked, or (``None``) for a large input on a terminal."""
    if progress is not None:
        return progress
    return entries >= PROGRESS_ENTRIES and _stderr_is_terminal()


class _Work:
    """The clock and the progress bar of one :func:`evaluate` call.

    :meth:`part` times a part of the report: a part entered inside another one (as
    :func:`calnotes._engine.rows.binned_rows` may do for ``"references"``, ``"p_values"``,
    ``"intervals"``) pauses the outer part's clock, so the parts never overlap and sum to at
    most the total.  The bar (tqdm, on standard error) counts work units over the whole
    computation; :meth:`update` advances it (``binned_rows`` calls it once per row), and a
    part given ``units`` advances it by those when it ends.
    """

    def __init__(self):
        self._start = time.perf_counter()
        self._seconds: dict = {}
        self._stack: list = []
        self._bar = None

    def show(self, show: bool, units: dict) -> None:
        """Open the bar over ``sum(units.values())`` work units when ``show``."""
        if show:
            from tqdm import tqdm

            self._bar = tqdm(total=sum(units.values()), desc="calnotes evaluate",
                             unit="step", leave=False)

    def update(self, units: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(units)

    def describe(self, name: str) -> None:
        if self._bar is not None:
            self._bar.set_description(f"calnotes evaluate: {name}", refresh=False)

    def part(self, name: str, units: int = 0) -> "_Part":
        """A context timing part ``name`` (its time adds up over repeated entries)."""
        return _Part(self, name, units)

    def timings(self) -> dict:
        """Seconds per part in the order of :data:`TIMED_PARTS`, then ``total``."""
        order = {name: i for i, name in enumerate(TIMED_PARTS)}
        out = {name: self._seconds[name]
               for name in sorted(self._seconds, key=lambda s: order.get(s, len(order)))}
        out["total"] = time.perf_counter() - self._start
        return out

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.close()
        return False


class _Part:
    def __init__(self, work: _Work, name: str, units: int):
        self.work, self.name, self.units = work, name, units

    def __enter__(self):
        now = time.perf_counter()
        stack = self.work._stack
        if stack:                                # pause the enclosing part
            outer = stack[-1]
            self.work._seconds[outer[0]] = self.work._seconds.get(outer[0], 0.0) + now - outer[1]
        stack.append([self.name, now])
        self.work.describe(self.name)
        return self.work

    def __exit__(self, *exc):
        now = time.perf_counter()
        stack = self.work._stack
        name, started = stack.pop()
        self.work._seconds[name] = self.work._seconds.get(name, 0.0) + now - started
        if stack:                                # the enclosing part resumes
            stack[-1][1] = now
            self.work.describe(stack[-1][0])
        if self.units:
            self.work.update(self.units)
        return False
