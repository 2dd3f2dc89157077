"""The claim badges' text is readable: a WCAG contrast of at least 4.5:1 (AA for normal-size
text) between each status badge's background (calnotes.book.claims BADGES, set inline by
claim_line_html) and the text colour it is shown in: the inline one, unless the book's
stylesheet (book/_ext/static/calnotes.css) forces another (white on #009E73 was 3.4:1)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from calnotes.book.claims import _registry

CSS = Path(__file__).resolve().parents[1] / "book" / "_ext" / "static" / "calnotes.css"


def _luminance(colour: str) -> float:
    """WCAG 2 relative luminance of a #rgb / #rrggbb colour."""
    hexes = colour.lstrip("#")
    if len(hexes) == 3:
        hexes = "".join(c * 2 for c in hexes)
    channels = [int(hexes[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_formula_on_known_pairs():
    assert contrast("#000", "#fff") == pytest.approx(21.0)
    assert contrast("#fff", "#009E73") == pytest.approx(3.4, abs=0.05)   # the old badge
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


def _stylesheet_badge_colour() -> str | None:
    """The text colour calnotes.css forces on .claim-badge (None when it sets none)."""
    text = re.sub(r"/\*.*?\*/", "", CSS.read_text(), flags=re.DOTALL)
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", text):
        if ".claim-badge" in selectors:
            m = re.search(r"(?<![-\w])color:\s*(#[0-9a-fA-F]{3,6})\s*!important", body)
            if m:
                return m.group(1)
    return None


@pytest.mark.parametrize("status", sorted(_registry.BADGES))
def test_every_badge_text_has_contrast_of_at_least_4_5(status):
    word, background, inline = _registry.BADGES[status]
    shown = _stylesheet_badge_colour() or inline     # !important beats the inline style
    ratio = contrast(shown, background)
    assert ratio >= 4.5, f"{word!r}: {shown} on {background} is {ratio:.2f}:1"
