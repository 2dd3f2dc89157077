"""Registry of checkable claims (see :mod:`calnotes.book.claims._registry`).

Importing this package registers every claim of every chapter.
"""

from ._registry import (CONTROL_KINDS, INCONCLUSIVE, NEAR_FACTOR, PAPER_NAMES, Claim,
                        ClaimFailed, Control, ControlResult, Result, all_claims, assert_claim,
                        assert_claims, cite, get_claim, ledger, register, registry_problems,
                        run_claim, run_controls, show, comparison_text)
from . import (foundations, definitions, truthfulness, dominance, table1, practice,  # noqa: F401
               proper, bregman, sharpness, utility, utility_experiments)

__all__ = ["CONTROL_KINDS", "INCONCLUSIVE", "NEAR_FACTOR", "PAPER_NAMES", "Claim", "ClaimFailed",
           "Control", "ControlResult", "Result", "all_claims", "assert_claim", "assert_claims",
           "cite", "get_claim", "ledger", "register", "registry_problems", "run_claim",
           "run_controls", "show", "comparison_text"]
