"""Claims checked in Part III, chapter *Calibration-sharpness diagrams* (paper 004, Secs. 3, 5).

The printed tables are claims too: the MRR rows of 004's Tables 1-6 should follow from the
test accuracy and the ECE alone (Sec. 3: MRR predicts the constant confidence ``h`` on the
predicted class and ``(1 - h)/(k - 1)`` on every other class), so their NLL and MSE columns
can be recomputed from two other columns of the same row.
"""

from __future__ import annotations

import itertools
import math

from ._registry import Claim, register

CHAPTER = "book/proper/sharpness_diagrams"

#: (table, k, test accuracy, ECE, NLL, MSE) of the MRR rows, all x100 as printed.
MRR_ROWS = (
    ("Table 1 (ViT, ImageNet)", 1000, 85.14, 0.18, 144.66, 27.51),
    ("Table 2 (ResNet-50, ImageNet)", 1000, 80.33, 0.28, 185.48, 35.48),
    ("Table 3 (EfficientNet, ImageNet)", 1000, 81.47, 0.07, 175.92, 33.62),
    ("Table 4 (ConvNeXt, ImageNet)", 1000, 84.13, 0.13, 153.34, 29.22),
    ("Table 5 (ResNet-32, CIFAR-10)", 10, 93.46, 0.34, 38.52, 12.60),
    ("Table 6 (ResNet-32, CIFAR-100)", 100, 70.20, 0.20, 197.85, 50.63),
)


def mrr_losses(accuracy: float, confidence: float, k: int) -> tuple:
    """(NLL, Brier summed over classes) of MRR's prediction at the given test accuracy.

    Right with probability ``accuracy``: the true class gets ``h``; otherwise it gets
    ``(1 - h)/(k - 1)`` and the predicted class ``h``.
    """
    a, h = accuracy, confidence
    rest = (1 - h) / (k - 1)
    nll = -(a * math.log(h) + (1 - a) * math.log(rest))
    right = (1 - h) ** 2 + (k - 1) * rest ** 2
    wrong = h ** 2 + (1 - rest) ** 2 + (k - 2) * rest ** 2
    return nll, a * right + (1 - a) * wrong


def mrr_row_intervals(row) -> dict:
    """The NLL and MSE (x100) that the row's accuracy and ECE allow.

    The confidence is ``h = A -/+ ECE`` (the sign is not printed: both are tried); the inputs
    are printed to two decimals, so each ranges over +-0.005 (x100); the losses are monotone
    in each input on these small boxes, so the corners give their range.
    """
    _, k, acc, ece, _, _ = row
    out = {"nll": [math.inf, -math.inf], "mse": [math.inf, -math.inf]}
    for sign, da, de in itertools.product((-1, 1), (-0.005, 0.005), (-0.005, 0.005)):
        a = (acc + da) / 100
        h = a + sign * (ece + de) / 100
        nll, mse = mrr_losses(a, h, k)
        for key, v in (("nll", 100 * nll), ("mse", 100 * mse)):
            out[key] = [min(out[key][0], v), max(out[key][1], v)]
    return out


def _distance(column: str) -> float:
    """max over the six MRR rows of the distance from the printed value to the allowed range,
    widened by the printed rounding (0.005)."""
    worst = 0.0
    index = {"nll": 4, "mse": 5}[column]
    for row in MRR_ROWS:
        lo, hi = mrr_row_intervals(row)[column]
        printed = row[index]
        worst = max(worst, lo - 0.005 - printed, printed - hi - 0.005, 0.0)
    return worst


for _column, _name in (("nll", "NLL"), ("mse", "MSE/Brier")):
    register(Claim(
        id=f"004.tables.mrr_{_column}",
        source="Reassessing calibration (under review), Sec. 3 and Tables 1-6",
        statement=(f"The {_name} of every MRR row of Tables 1-6 follows from the row's test"
                   " accuracy and ECE alone (MRR predicts h = accuracy -/+ ECE on the predicted"
                   " class and (1 - h)/(k - 1) elsewhere): measured, the largest distance of a"
                   " printed value from the range its inputs allow."),
        check=lambda size, c=_column: _distance(c),
        reference=0.0, tolerance=0.0,
        tolerance_reason=("the allowed range already covers the rounding of the printed inputs"
                          " (+-0.005 each, x100) and of the printed output (+-0.005)"),
        chapter=CHAPTER,
    ))
