"""Claim lines read as statements: every registered claim's line, rendered from a synthetic
result (no check is run), names its quantity, compares with a symbol and carries none of the
registry's code words (``le``, ``ge``, ``abs``, ``rel``, ``size smoke``)."""

import html
import re

import pytest

from calnotes.book import claims
from calnotes.book.claims._registry import (PAPER_NAMES, Claim, Control, ControlResult, Result,
                                            claim_line_html, claim_sentence, comparison_text)

CLAIMS = claims.all_claims()
SYMBOLS = ("=", "≤", "≥", "≈", "≠", "<", ">")
CODE_WORDS = re.compile(r"\b(le|ge|abs|rel|smoke|size)\b")


def synthetic(claim: Claim, size: str = "smoke") -> Result:
    """A result that comes out as registered, without running the check: the reference itself
    when the claim must agree, a value beyond the tolerance when it must disagree; every control
    rejected (a value beyond its tolerance)."""
    ref, tol = claim.reference, claim.tolerance

    def beyond(r):
        step = tol + max(1.0, abs(r))
        return r - step if claim.comparison == "ge" else r + step

    measured = ref if claim.expected_agreement else beyond(ref)
    controls = []
    for k in claim.controls:
        r = ref if k.reference is None else k.reference
        controls.append(ControlResult(claim.id, k, beyond(r), r, 0.0, size, rejected=True))
    result = Result(claim, measured, 0.0, size, controls=controls)
    assert result.as_expected, claim.id
    return result


def visible_text(line: str) -> str:
    """The claim line as a reader sees it before opening the *why* dropdown."""
    line = re.sub(r"<details.*?</details>", "", line, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", line))


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_every_claim_line_reads_as_a_statement(claim):
    result = synthetic(claim)
    sentence = claim_sentence(result)
    line = visible_text(claim_line_html(result))
    assert claim.quantity.strip(), f"{claim.id}: no quantity"
    assert claim.quantity.strip() in sentence and sentence in line
    # the comparison as a symbol, right after "<quantity> ="
    rest = sentence.split(claim.quantity.strip() + " = ", 1)[1]
    assert any(s in rest for s in SYMBOLS) or rest.split(";")[0].endswith("exactly"), sentence
    # no code words outside the claim id (which is an identifier: 000.ex1.1.not_truthful)
    prose = line.replace(claim.id, "")
    assert not CODE_WORDS.search(prose), (claim.id, CODE_WORDS.search(prose).group(0), line)
    # the paper by its short name
    assert PAPER_NAMES[claim.id[:3]] in line, line
    if claim.controls:
        assert "false neighbour" in sentence and result.nearest_rejected.name in sentence


def test_the_size_is_said_in_words_in_the_dropdown():
    result = synthetic(claims.get_claim("000.thm2.6.truthful"))
    line = claim_line_html(result)
    assert "Run at the small (smoke) size" in line
    assert "Run at the full size" in claim_line_html(synthetic(result.claim, "full"))
    assert "size <code>" not in line


def _claim(**kw):
    base = dict(id="000.x", source=claims.cite("000", "Thm 9.9"), statement="s",
                check=lambda size: 0.0, reference=0.0, tolerance=0.0, tolerance_reason="r",
                chapter="c", quantity="Q")
    base.update(kw)
    return Claim(**base)


@pytest.mark.parametrize("kw, measured, text", [
    (dict(comparison="le", tolerance=4.0), 1.3318, "Q = 1.33 ≤ 4 (the tolerance)"),
    (dict(comparison="le", tolerance=4.0), 5.0, "Q = 5 > 4 (the tolerance)"),
    (dict(comparison="ge", reference=0.9, tolerance=0.02), 0.95,
     "Q = 0.95 ≥ 0.88 (0.9 minus a tolerance of 0.02)"),
    (dict(comparison="le"), 2.0, "Q = 2 > 0"),
    (dict(comparison="ge", reference=0.5, tolerance=1e-12), 0.75,
     "Q = 0.75 ≥ 0.5 (to within rounding, 1e-12)"),
    (dict(comparison="ge", reference=1e-12), 0.048561,
     "Q = 0.0486 > 0 (beyond rounding: ≥ 1e-12)"),
    (dict(comparison="le", reference=-1e-12), -0.0119,
     "Q = −0.0119 < 0 (beyond rounding: ≤ −1e-12)"),
    (dict(comparison="abs", tolerance=1e-12), 4e-16,
     "Q = 4e-16 ≈ 0 (to within rounding, 1e-12)"),
    (dict(comparison="abs"), 0.0, "Q = 0 exactly"),
    (dict(comparison="abs"), 3.0, "Q = 3 ≠ 0"),
    (dict(comparison="abs", reference=-0.5, tolerance=0.01), -0.497,
     "Q = −0.497 ≈ −0.5 (|difference| 0.003 ≤ 0.01)"),
    (dict(comparison="abs", reference=-1.0, tolerance=0.1), -0.02,
     "Q = −0.02 ≠ −1 (|difference| 0.98 > 0.1)"),
    (dict(comparison="le", reference=1.0), 1.0003, "Q = 1.0003 > 1"),   # never "1 > 1"
])
def test_comparison_wording(kw, measured, text):
    claim = _claim(**kw)
    assert claim_sentence(Result(claim, measured, 0.0, "smoke")) == text


def test_the_nearest_rejected_false_neighbour_is_named():
    near = Control("bound 5% smaller", "E <= 0.95 B", check=lambda s: 1.0, kind="scaled",
                   factor=0.95)
    far = Control("reversed", "E >= B", check=lambda s: 1.0, kind="alternative")
    claim = _claim(comparison="le", controls=(far, near))
    ran = [ControlResult(claim.id, k, 1.0, 0.0, 0.0, "smoke", rejected=True) for k in (far, near)]
    sentence = claim_sentence(Result(claim, 0.0, 0.0, "smoke", controls=ran))
    assert sentence == ("Q = 0 ≤ 0; all 2 false neighbours are rejected, the nearest "
                        "“bound 5% smaller”")
    one = claim_sentence(Result(claim, 0.0, 0.0, "smoke", controls=ran[1:]))
    assert one.endswith("; its false neighbour “bound 5% smaller” is rejected")
    weak = [ControlResult(claim.id, near, 0.0, 0.0, 0.0, "smoke", rejected=False)]
    assert "NOT rejected: “bound 5% smaller”" in claim_sentence(
        Result(claim, 0.0, 0.0, "smoke", controls=weak))
    illustration = _claim(comparison="le", expect="illustrates", evidence="loose",
                          controls=(far,))
    assert claim_sentence(Result(illustration, 0.0, 0.0, "smoke", controls=ran[:1])).endswith(
        "its far false neighbour “reversed” is rejected (no near one can be)")


def test_a_claim_without_a_quantity_reads_measured_and_is_refused():
    bare = _claim(quantity="", comparison="ge", reference=1e-12,
                  controls=(Control("k = 2", "s", check=lambda s: 0.0, kind="boundary"),))
    assert claim_sentence(Result(bare, 0.048561, 0.0, "smoke")).startswith(
        "measured = 0.0486 > 0")
    assert claims.registry_problems([bare]) == [
        "000.x: no quantity (say in words what the check's number is, e.g. '|z| of the "
        "simulated mean against the exact value'; the claim line reads '<quantity> = "
        "<measured> <symbol> <threshold>')"]
    assert claims.registry_problems([_claim(
        quantity="Q", controls=bare.controls)]) == []


def test_a_source_must_name_its_paper_by_its_short_name():
    k = (Control("k = 2", "s", check=lambda s: 0.0, kind="boundary"),)
    old = _claim(id="004.x", source="Reassessing calibration (under review), Prop. 4.8",
                 controls=k)
    assert claims.registry_problems([old]) == [
        "004.x: source 'Reassessing calibration (under review), Prop. 4.8' does not name its "
        "paper as 'the reassessing paper' (use cite('004', ...))"]
    assert claims.registry_problems([_claim(id="004.x", source=claims.cite("004", "Prop 4.8"),
                                            controls=k)]) == []


def test_every_registered_claim_belongs_to_one_of_the_four_papers():
    assert {c.id.split(".", 1)[0] for c in CLAIMS} <= set(PAPER_NAMES)
    assert set(PAPER_NAMES) == {"000", "001", "003", "004"}
    for c in CLAIMS:
        for other in ("Gruber & Buettner", "Reassessing calibration", "Hegazy",
                      "Making and Evaluating", "(under review)", "Paper 00"):
            assert other not in c.source, (c.id, c.source)


def test_comparison_text_is_what_follows_the_quantity():
    claim = _claim(comparison="le", tolerance=4.0)
    assert claim_sentence(Result(claim, 1.0, 0.0, "smoke")) == "Q = " + comparison_text(claim, 1.0)


# --------------------------------------------------------------------------- chapter cells

import ast  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```\n", re.S)
CHAPTERS = sorted(p for p in (ROOT / "book").rglob("*.md")
                  if "_build" not in p.parts and "appendix" not in p.parts)


def _claim_only(code: str) -> bool:
    """A cell that does nothing but assert and show claims (literal ids, a size variable)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return False
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    allowed = ("claims.assert_claim", "claims.assert_claims", "show", "claims.show")
    return bool(calls) and all(ast.unparse(c.func) in allowed for c in calls)


@pytest.mark.parametrize("path", CHAPTERS, ids=[str(p.relative_to(ROOT)) for p in CHAPTERS])
def test_claim_cells_are_hidden_and_never_consecutive(path):
    """A claim shows as its line, not under a code block, and a run of claims is one cell."""
    text = path.read_text()
    previous_end, previous_claim = None, False
    for m in CELL.finditer(text):
        lines = m.group(1).split("\n")
        options = [line for line in lines if line.startswith(":")]
        code = "\n".join(line for line in lines if not line.startswith(":"))
        claim = _claim_only(code)
        if claim:
            assert any("hide-input" in o or "remove-input" in o for o in options), (
                f"{path.name}: claim cell not hidden: {code.strip()}")
            assert not (previous_claim and not text[previous_end:m.start()].strip()), (
                f"{path.name}: consecutive claim cells; assert them in one call "
                f"(claims.assert_claims(...)): {code.strip()}")
        previous_end, previous_claim = m.end(), claim
