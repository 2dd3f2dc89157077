"""Claims of Part II, chapter *Truthful calibration measures* (paper 000: Example 1.1, Thm 2.6, Thm 3.1, Obs 3.2)."""

from __future__ import annotations
