"""Claims of Part II, chapter *Table 1* (paper 000: the 16 cells of Table 1 and conclusions 1-4)."""

from __future__ import annotations
