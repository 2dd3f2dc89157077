"""Tables that fit the book's text column: styled_table's
``compact`` layout (one header row, narrow padding, wrapping row labels) and ``note_marks``
(a note repeated on every row, said once).

Each check is shown to fail on the table it replaces (the default layout, the raw column), so
that a pass means something.
"""

import re

import numpy as np
import pandas as pd
import pytest

from calnotes.book.tables import note_marks, styled_table


def _header_rows(html):
    return html.count("<tr>", 0, html.index("<tbody>"))


def _table():
    return pd.DataFrame({"value": [0.1996, 0.1996], "seconds": [0.0285, 0.1249]},
                        index=pd.Index(["calnotes", "uncertainty-calibration"], name="library"))


def test_compact_puts_the_index_name_in_the_one_header_row():
    html = styled_table(_table(), compact=True).to_html()
    assert _header_rows(html) == 1
    # the index's name is the corner cell of that row, left-aligned above the row labels
    head = html[:html.index("<tbody>")]
    assert re.search(r'<th class="index_name level0"[^>]*>library</th>', head)
    assert "text-align: left" in html and "padding: 0.2em 0.35em" in html
    assert "white-space: normal" in html           # long row labels may wrap


def test_default_layout_is_unchanged_negative_control():
    html = styled_table(_table()).to_html()
    assert _header_rows(html) == 2                  # a header row of its own for the name
    assert "0.35em" not in html and "white-space: normal" not in html


@pytest.mark.parametrize("index", [
    pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["x", "y"]),
    pd.Index(["a", "b"]),                            # no name: nothing to move
])
def test_compact_keeps_what_it_cannot_move(index):
    table = pd.DataFrame({"value": [1.0, 2.0]}, index=index)
    compact = styled_table(table, compact=True).to_html()
    plain = styled_table(table).to_html()
    assert _header_rows(compact) == _header_rows(plain)


def test_compact_keeps_the_values_and_names():
    html = styled_table(_table().rename(index={"calnotes": "f2"}), compact=True).to_html()
    assert "\\(f_2\\)" in html and "0.1996" in html and "0.1249" in html


def test_note_marks_says_a_repeated_note_once():
    notes = ["same definition: equal to rounding (asserted, rtol 1e-09)"] * 3
    table = pd.DataFrame({"value": [1.0, 1.0, 1.0, 1.0], "note": [None] + notes})
    shown, text = note_marks(table)
    assert "note" not in shown.columns and text == notes[0]
    html = styled_table(shown, caption=f"Every row but the first: {text}.").to_html()
    assert html.count("same definition") == 1
    # negative control: the raw column repeats it on every row
    assert styled_table(table).to_html().count("same definition") == 3


def test_note_marks_letters_for_different_notes():
    table = pd.DataFrame({"v": [1, 2, 3, 4]}).assign(note=["x", np.nan, "y", "x"])
    shown, text = note_marks(table)
    assert shown["note"].tolist() == ["a", "", "b", "a"] and text == "a: x; b: y"
    assert note_marks(pd.DataFrame({"note": [None, ""]}))[1] == ""


def test_note_marks_rejects_bad_arguments():
    with pytest.raises(TypeError, match="^df:"):
        note_marks([1, 2])
    with pytest.raises(ValueError, match="^column:"):
        note_marks(pd.DataFrame({"a": [1]}))
