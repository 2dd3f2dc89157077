"""The planted slips of the claims' power suite, one module per part of the book.

Each module defines ``PLANTS``, a list of :class:`planting.Plant`; tests/test_claim_power.py
plants every one and requires a registered claim to catch it.
"""

from . import foundations, proper, sharpness, truthfulness, utility

PLANTS = [*foundations.PLANTS, *truthfulness.PLANTS, *proper.PLANTS, *sharpness.PLANTS,
          *utility.PLANTS]
