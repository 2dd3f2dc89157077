"""Claims of Part II, chapter *Dominance* (paper 000: Thm B.3, Lemmas C.2 and C.1, Thm 4.1)."""

from __future__ import annotations
