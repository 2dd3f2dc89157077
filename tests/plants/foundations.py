"""Planted slips in the library functions behind the claims of this part of the book."""

from planting import Plant, scale_result, with_kwargs, wrap_result  # noqa: F401

PLANTS: list = []
