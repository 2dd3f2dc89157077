"""calnotes.book.exercises: every checker accepts its own solution's answer and rejects wrong ones;
every exercise of the book is checked or listed as a proof/explanation; and the course
edition's stripping (scripts/course.py) removes every solution without breaking a chapter."""

import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import calnotes
from calnotes.book import exercises
from calnotes.theory import utility as ut
from calnotes.book.claims import utility as cu
from calnotes.book.exercises import NO_CHECKER, check
from course_script import course_script

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "book").rglob("*.md"))
EXERCISE = re.compile(r"^(`{3,}|:{3,})\{exercise\}[^\n]*\n(?::[^\n]*\n)*?:label:\s*(\S+)",
                      re.MULTILINE)
SOLUTION = re.compile(r"^(`{3,})\{solution-start\}\s*(\S+).*?^`{3,}\{solution-end\}",
                      re.MULTILINE | re.DOTALL)
CODE = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def _book_exercises() -> dict:
    """``{label: solution text}`` for every exercise of the book ('' if it has no solution)."""
    out = {}
    for path in SOURCES:
        text = path.read_text()
        solutions = {m.group(2): m.group(0) for m in SOLUTION.finditer(text)}
        for m in EXERCISE.finditer(text):
            out[m.group(2)] = solutions.get(m.group(2), "")
    return out


BOOK = _book_exercises()

a, b, p = sp.symbols("a b p")
c, pi, n, m = sp.symbols("c pi n m")
k, eps3 = sp.symbols("k eps3")
ka, delta = sp.symbols("a delta")


def _run_solution(label: str) -> dict:
    """Execute the code cells of a solution (self-contained ones) and return its namespace."""
    namespace = {"np": np, "calnotes": calnotes, "ut": ut, "cu": cu,
                 "rng": np.random.default_rng(0)}
    for cell in CODE.findall(BOOK[label]):
        source = "\n".join(line for line in cell.splitlines() if not line.startswith(":"))
        source = re.sub(r"^glue\(.*$", "", source, flags=re.MULTILINE)
        exec(compile(source, f"<solution {label}>", "exec"), namespace)
    return namespace


def _from_code(label):
    def answer():
        ns = _run_solution(label)
        return {
            "ex-qece-by-hand": lambda: (ns["l2"], ns["ece2_sq"], ns["ece2_sq"] / ns["l2"]),
            "ex-spherical-bregman": lambda: (ns["q_ex"][0], ns["p_ex"][0]),
            "ex-001-binned-bound-tight": lambda: (ns["d"], [0.0, 0.7, 1.0]),
            "ex-001-dkw-m": lambda: (ns["M_needed"], ut.dkw_halfwidth(1500, 0.05)),
            "ex-001-projection": lambda: ns["out"],
        }[label]()
    return answer


# The answer each solution gives, and the text of the solution it is read from (asserted to be
# in the book, so that a changed solution fails here).  Where the solution's code computes it
# and runs on its own, the answer comes from executing that code.
RIGHT = {
    "ex-qece-by-hand": ((0.13 / 36, 0.13 / 18, 2), [r"\frac{0.13}{36}", r"\frac{0.13}{18}",
                                                    "m = 2"]),
    "ex-ties-by-outcome": ((1 / 16, 1.5 / 16), ["$1/16$", "$1.5/16$"]),
    "ex-spherical-bregman": (([0.9, 0.1], [0.5, 0.5]), ["q = (0.9, 0.1)", "p = (0.5, 0.5)"]),
    "ex-constant-qece": ((0.55, 0.0165), [r"\bar p^* = 0.55", "= 0.0165"]),
    "ex-smallest-k": (10, ["the smallest $k$ is 10"]),
    "dom-ex-threshold": ((a / (a + b), (a + b) * sp.Abs(p - a / (a + b)), "0-1 loss"),
                         [r"\tau := a / (a + b)", r"(a + b)\,|p - \tau|", "0-1 loss"]),
    "dom-ex-miscalibrated": (((c - pi) ** 2 / m + pi * (1 - pi) / n, n),
                             [r"(c - \pi)^2 \sum_{j=1}^m \frac{|B_j|^2}{n^2}"
                              r" + \frac{\pi(1 - \pi)}{n}", "only for $m = n$"]),
    "t1-ex-f4": ((k - 1) * eps3 ** 2 / m + (1 - 1 / k) / (k * n),
                 [r"\frac{(k-1)\varepsilon_3^2}{m} + \frac1{kn}\Bigl(1 - \frac1k\Bigr)"]),
    "ex-003-mmce-constant": ((sp.sqrt(ka) * sp.Abs(delta), 1),
                             [r"\sqrt a\,\lvert\delta\rvert", r"iff $a \le 1$"]),
    "ex-001-uc-constant": (0, ["zero when $p$ is\nthe marginal"]),
    "ex-001-uc-ties": ((0.1 / 3, 0.3 / 3), ["= 0.1/3$", "$0.3/3$"]),
    "ex-001-binned-bound-tight": (None, ["np.array([0.0, 0.7, 1.0])"]),
    "ex-001-dkw-m": ((4612, 0.035), ["4{,}612", r"\approx 0.035"]),
    "ex-001-projection": ([0.7, 0.2, 0.1], ["$(0.7, 0.2, 0.1)$"]),
    "ex-noise-floor": ("sigma / sqrt(n)", [r"\sigma / \sqrt n"]),
}
FROM_CODE = ["ex-qece-by-hand", "ex-spherical-bregman", "ex-001-binned-bound-tight",
             "ex-001-dkw-m", "ex-001-projection"]

# Plausible wrong answers: at least one per checker.
_pop = calnotes.theory.population.FiniteDistribution
WRONG = {
    "ex-qece-by-hand": [(0.13 / 18, 0.13 / 36, 0.5), (0.13 / 36, 0.13 / 18, 0.5),
                        (0.13 / 6, 0.13 / 18, 2), (0.13, 0.26, 2)],
    "ex-ties-by-outcome": [(1.5 / 16, 1 / 16), (1, 1.5), (1 / 16, 2 / 16)],
    "ex-spherical-bregman": [([0.9, 0.1], [0.1, 0.9]), ([0.5, 0.5], [0.5, 0.5]),
                             ([0.9, 0.2], [0.5, 0.5]), ([0.9, 0.1], [0.5, 0.25, 0.25])],
    "ex-constant-qece": [(0.5, 0.0165), (0.55, 0.165), (0.55, 0.025)],
    "ex-smallest-k": [9, 11, 3, 10.5],
    "dom-ex-threshold": [(b / (a + b), (a + b) * sp.Abs(p - a / (a + b)), "0-1"),
                         (a / (a + b), (a + b) * (p - a / (a + b)), "0-1"),
                         (a / (a + b), sp.Abs(p - a / (a + b)), "0-1"),
                         (a / (a + b), (a + b) * sp.Abs(p - a / (a + b)), "brier")],
    "dom-ex-miscalibrated": [(((c - pi) ** 2 + pi * (1 - pi)) / n, n),
                             ((c - pi) ** 2 / n + pi * (1 - pi) / m, n),
                             ((c - pi) ** 2 / m + pi * (1 - pi) / n, 1),
                             ((c - sp.pi) ** 2 / m + sp.pi * (1 - sp.pi) / n, n)],
    "t1-ex-f4": [2 * (k - 1) * eps3 ** 2 / (k * m) + (1 - 1 / k) / (k * n),
                 (k - 1) ** 2 * eps3 ** 2 / m + (1 - 1 / k) / (k * n),
                 (k - 1) * eps3 ** 2 / m, "(k-1)*x**2/m"],
    "ex-003-mmce-constant": [(sp.sqrt(ka) * delta, 1), (ka * sp.Abs(delta), 1),
                             (sp.sqrt(ka) * sp.Abs(delta), 2)],
    "ex-001-uc-constant": [1 / 3, 0.01],
    "ex-001-uc-ties": [(0.1, 0.3), (0.1 / 3, 0.1 / 3), (0.3 / 3, 0.1 / 3)],
    "ex-001-binned-bound-tight": [
        # calibrated: both sides zero
        (_pop([0.5, 0.5], [[0.3, 0.6, 0.1], [0.8, 0.1, 0.1]],
              [[0.3, 0.6, 0.1], [0.8, 0.1, 0.1]]), [0.0, 0.7, 1.0]),
        # the solution's population, but both atoms in one bin
        (_pop([0.5, 0.5], [[0.6, 0.4, 0.0], [1.0, 0.0, 0.0]],
              [[0.3, 0.6, 0.1], [0.8, 0.1, 0.1]]), [0.0, 0.9, 1.0]),
        # three bins
        (_pop([0.5, 0.5], [[0.6, 0.4, 0.0], [1.0, 0.0, 0.0]],
              [[0.3, 0.6, 0.1], [0.8, 0.1, 0.1]]), [0.0, 0.5, 0.7, 1.0]),
    ],
    "ex-001-dkw-m": [(4611, 0.035), (3745, 0.035), (4612, 0.0306), (9224, 0.0248)],
    "ex-001-projection": [[0.8, 0.3, 0.2], np.array([0.8, 0.3, 0.2]) / 1.3, [0.6, 0.3, 0.1],
                          [0.7, 0.2]],
    "ex-noise-floor": ["1/n", "log(n)/n", "sigma", "sqrt(n)", 0.5],
}

# Strings no verdict may contain: the right answers as a student would read them.
SECRETS = {
    "ex-qece-by-hand": ["0.0036", "0.0072", "0.13"],
    "ex-ties-by-outcome": ["0.0625", "0.09375", "1/16", "1.5/16"],
    "ex-constant-qece": ["0.55", "0.0165"],
    "ex-smallest-k": ["10"],
    "dom-ex-threshold": ["a/(a + b)", "a/(a+b)", "zero_one", "0-1"],
    "dom-ex-miscalibrated": ["(c - pi)**2/m"],
    "t1-ex-f4": ["(k - 1)*varepsilon_3**2/m"],
    "ex-003-mmce-constant": ["sqrt(a)"],
    "ex-001-uc-ties": ["0.0333", "0.1/3"],
    "ex-001-dkw-m": ["4612", "0.035"],
    "ex-001-projection": ["0.7, 0.2, 0.1", "[0.7", "tau = 0.1"],
    "ex-noise-floor": ["sqrt(n)"],
}


# ---------------------------------------------------------------------------------------------
# coverage of the book
# ---------------------------------------------------------------------------------------------
def test_every_exercise_of_the_book_is_checked_or_listed():
    assert len(BOOK) >= 23
    checked, listed = set(exercises.labels()), set(NO_CHECKER)
    assert not checked & listed
    assert set(BOOK) == checked | listed, (
        f"not covered: {sorted(set(BOOK) - checked - listed)};"
        f" not in the book: {sorted(checked | listed - set(BOOK))}")


def test_every_exercise_has_a_solution_in_the_book():
    assert all(BOOK.values()), [label for label, text in BOOK.items() if not text]


def test_the_test_tables_cover_every_checker():
    assert set(RIGHT) == set(exercises.labels()) == set(WRONG)


# ---------------------------------------------------------------------------------------------
# right answers: those of the solutions
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("label", sorted(RIGHT))
def test_the_solution_states_the_answer_tested(label):
    solution = BOOK[label]
    for text in RIGHT[label][1]:
        assert text in solution, f"{label}: {text!r} not in the solution"


@pytest.mark.parametrize("label", sorted(set(RIGHT) - {"ex-001-binned-bound-tight"}))
def test_checker_accepts_the_solutions_answer(label):
    verdict = check(label, RIGHT[label][0])
    assert verdict.correct and bool(verdict), str(verdict)
    assert str(verdict).startswith(f"{label}: right.")
    assert all(verdict.parts.values()) and not verdict.hints


@pytest.mark.parametrize("label", FROM_CODE)
def test_checker_accepts_the_answer_computed_by_the_solutions_code(label):
    verdict = check(label, _from_code(label)())
    assert verdict.correct, str(verdict)


def test_answers_in_other_forms():
    # strings, sympy numbers, numpy scalars and arrays, a dict with every part
    assert check("ex-qece-by-hand", ("0.13/36", sp.Rational(13, 1800), np.float64(2.0)))
    assert check("ex-ties-by-outcome", {"stable": sp.Rational(1, 16), "by_outcome": "3/32"})
    assert check("ex-smallest-k", np.int64(10))
    assert check("ex-smallest-k", {"k": 10})
    assert check("ex-001-projection", np.array([[0.7, 0.2, 0.1]])[0])
    assert check("dom-ex-threshold", ("a/(a+b)", "Abs(a*(1 - p) - b*p)", calnotes.ZERO_ONE))
    assert check("dom-ex-miscalibrated", ("(c - pi)**2/m + pi*(1 - pi)/n", "n"))
    assert check("t1-ex-f4", "(k-1)*epsilon_3**2/m + (k-1)/(k**2*n)")
    assert check("ex-003-mmce-constant", ("sqrt(a)*Abs(delta)", 1.0))
    assert check("ex-noise-floor", "3/sqrt(n)")
    assert check("ex-noise-floor", sp.Symbol("C") * sp.Symbol("n") ** sp.Rational(-1, 2))
    assert check("ex-spherical-bregman", ([0.2, 0.3, 0.5], [0.6, 0.2, 0.2]))


def test_numbers_within_the_stated_tolerance():
    exact = 0.13 / 36
    rounded = float(f"{exact:.3g}")                       # three significant digits
    assert check("ex-qece-by-hand", {"l2_qece": rounded}).parts["l2_qece"]
    off = exact * (1 + 2 * exercises.RTOL)
    assert not check("ex-qece-by-hand", {"l2_qece": off}).parts["l2_qece"]


# ---------------------------------------------------------------------------------------------
# wrong answers
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("label,answer",
                         [(label, answer) for label in sorted(WRONG) for answer in WRONG[label]])
def test_checker_rejects_a_wrong_answer_with_a_hint(label, answer):
    verdict = check(label, answer)
    assert not verdict.correct
    assert verdict.hints and all(verdict.hints.values())
    text = str(verdict)
    assert text.startswith(f"{label}: not yet.")
    for secret in SECRETS.get(label, []):
        assert secret not in text, f"{label}: the verdict shows {secret!r}: {text}"


def test_known_mistakes_get_their_own_hint():
    v = check("ex-001-dkw-m", (4611, 0.035))
    assert v.parts == {"M": False, "halfwidth": True} and "round up" in v.hints["M"]
    v = check("ex-003-mmce-constant", (sp.sqrt(ka) * delta, 1))
    assert "sign" in v.hints["mmce"]
    v = check("t1-ex-f4", (k - 1) ** 2 * eps3 ** 2 / m + (1 - 1 / k) / (k * n))
    assert "confidence cell" in v.hints["cell"]
    v = check("dom-ex-miscalibrated", ((c - sp.pi) ** 2 / m + sp.pi * (1 - sp.pi) / n, n))
    assert "sympy.pi" in v.hints["expectation"]


def test_unreadable_answers_are_wrong_not_errors():
    assert "give a number" in check("ex-001-uc-constant", "zero").hints["uc_cwe"]
    assert "integer" in check("ex-smallest-k", [10]).hints["k"]
    assert "shape" in check("ex-001-projection", [[0.7, 0.2, 0.1]] * 2).hints["projection"]
    assert "unknown symbol" in check("t1-ex-f4", "x").hints["cell"]


def test_partial_answers():
    v = check("ex-qece-by-hand", {"factor": 2})
    assert not v.correct
    assert v.parts == {"l2_qece": None, "ece2_squared": None, "factor": True}
    assert "not checked" in str(v)


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------
def test_unknown_label_lists_the_labels():
    with pytest.raises(ValueError, match="unknown exercise label 'ex-nope'") as err:
        check("ex-nope", 1)
    for label in exercises.labels():
        assert label in str(err.value)


@pytest.mark.parametrize("label", sorted(NO_CHECKER))
def test_exercises_without_checker_say_why(label):
    with pytest.raises(ValueError, match="has no checker: its answer is"):
        check(label, 0)
    with pytest.raises(ValueError, match="has no checker"):
        exercises.describe(label)


def test_an_answer_of_the_wrong_form_is_a_verdict_not_an_error():
    """A student in Jupyter gets "could not read your answer" and what to give, no traceback:
    a tuple of the wrong length, a string for several parts, an unknown part name, an
    expression that does not parse."""
    for answer, says in [((0.1, 0.2), "give a tuple of 3 answers"),
                         ("0.1, 0.2, 2", "give a tuple of 3 answers"),
                         ({"l1": 0.1}, "unknown part(s) ['l1']")]:
        v = check("ex-qece-by-hand", answer)
        assert not v and v.status == "unreadable"
        assert str(v).startswith("ex-qece-by-hand: not yet. Could not read your answer: ")
        assert says in str(v)
    v = check("ex-smallest-k", {"kk": 10})
    assert v.status == "unreadable" and "the only part is 'k'" in v.problem
    hint = check("ex-noise-floor", "1/sqrt(n").hints["rate"]
    assert hint.startswith("could not read '1/sqrt(n' as an expression")
    # negative controls: well-formed answers are read (right: M = ceil(ln(2/0.05) / (2 0.02^2))
    # = ceil(4611.1) = 4612 and sqrt(ln(40) / 3000) = 0.03507, by hand; wrong: 4000)
    assert check("ex-001-dkw-m", (4612, 0.0351)).status == "right"
    assert check("ex-001-dkw-m", (4000, 0.0351)).status == "not yet"
    assert "could not read" not in check("ex-noise-floor", "1/n").hints["rate"]


@pytest.mark.parametrize("label, answer", [
    ("ex-smallest-k", "about 0.004"), ("ex-001-uc-constant", "zero"),
    ("ex-noise-floor", "1/sqrt(n"), ("ex-spherical-bregman", 3), ("ex-001-projection", "row")])
def test_a_part_that_is_not_of_its_form_is_unreadable(label, answer):
    """A string that is not a number, an expression that does not parse, a number where a pair
    is asked: "unreadable", as documented, with what to give -- not "not yet", which says the
    answer was read and is wrong."""
    v = check(label, answer)
    assert v.status == "unreadable" and v.problem, (label, answer, v)
    assert "Could not read your answer" in str(v)


@pytest.mark.parametrize("label, answer", [
    ("ex-smallest-k", 7), ("ex-smallest-k", 2.5), ("ex-smallest-k", "7"),
    ("ex-001-uc-constant", "1/3"), ("ex-noise-floor", "1/n"),
    ("ex-001-projection", [[0.7, 0.2, 0.1]] * 2)])
def test_a_read_but_wrong_answer_is_not_yet(label, answer):
    """The control: answers of the right form that are wrong (a wrong integer, a fraction
    where an integer is asked, an array of the wrong shape) are "not yet", not unreadable."""
    assert check(label, answer).status == "not yet", (label, answer)


def test_one_unreadable_part_keeps_the_verdicts_of_the_others():
    v = check("ex-001-dkw-m", (4612, "about 0.03"))
    assert v.status == "unreadable" and v.parts["M"] is True
    assert v.problem.startswith("halfwidth: give a number")
    assert "  M: right" in str(v)


def test_the_placeholder_of_a_check_cell_is_not_answered():
    v = check("ex-qece-by-hand", {"l2_qece": ..., "ece2_squared": ..., "factor": ...})
    assert v.status == "not answered" and v.parts == dict.fromkeys(v.parts)
    v = check("ex-qece-by-hand", {"l2_qece": ..., "ece2_squared": ..., "factor": 2})
    assert v.status == "not yet" and v.parts["factor"] is True
    assert check("ex-smallest-k", ...).status == "not answered"


def test_describe_names_every_part():
    for label in exercises.labels():
        lines = exercises.describe(label).splitlines()
        assert lines and all(": " in line for line in lines)


# ---------------------------------------------------------------------------------------------
# the student edition's sources (scripts/course.py), without building it
# ---------------------------------------------------------------------------------------------
_course = course_script     # scripts/course.py as a module (tests/course_script.py)


@pytest.mark.parametrize("path", [p for p in SOURCES if "{solution-start}" in p.read_text()],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_course_strips_every_solution_and_leaves_nothing_behind(path):
    course = _course()
    text = path.read_text()
    new, solutions = course.strip_solutions(text)
    labels = course.exercise_labels(text)
    assert [s.label for s in solutions] == labels
    assert "{solution" not in new
    for sol in solutions:
        body = sol.text.split("\n", 3)[-1]               # past the directive's own lines
        assert body.strip()[:60] not in new
        boxes = new.count(f'check("{sol.label}"')
        assert boxes == (1 if sol.label in exercises.labels() else 0)
    assert course.exercise_labels(new) == labels          # the exercises stay
    others = "\n".join(p.read_text() for p in SOURCES if p != path)
    left = course.leftovers(text, solutions, others)
    assert not (left.needed or left.shadowed or left.glue or left.labels), left


def test_course_detects_what_a_solution_leaves_behind():
    course = _course()
    text = "\n".join([
        "```{code-cell} ipython3", "x = 1", "```", "",
        "````{solution-start} ex-a", ":class: dropdown", "````", "", "(eq-sol)=", "text", "",
        "```{code-cell} ipython3", "helper = 3", "x = 5", "z = rng.uniform()",
        'glue("gkey", 1)', "```", "", "````{solution-end}", "````", "",
        "```{code-cell} ipython3", "print(helper + x)", "```", "",
        "See {glue:text}`gkey:.2f` and {ref}`eq-sol`.", "",
        ":::{solution} ex-b", "plain", ":::", "",
    ])
    solutions = course.find_solutions(text)
    assert [(s.label, s.first_line, s.last_line) for s in solutions] == [("ex-a", 4, 19),
                                                                      ("ex-b", 27, 29)]
    left = course.leftovers(text, solutions)
    assert left.needed == {"helper": {"ex-a"}} and left.shadowed == {"x": {"ex-a"}}
    assert left.glue == ["gkey"] and left.labels == ["eq-sol"] and left.rng == ["ex-a"]


# ---------------------------------------------------------------------------------------------
# checking a folder of submissions (calnotes check-notebook)
# ---------------------------------------------------------------------------------------------
def _submission(path, answer_line_m=None, answer_line_h=None, extra=None):
    """A student notebook as the course edition writes it (calnotes.book.notebook_markdown's
    exercise cells), with the check cell's ... replaced as a student would."""
    import nbformat

    from calnotes.book.notebook_markdown import exercise_cells
    cells = exercise_cells("ex-001-dkw-m") + exercise_cells("ex-murphy")
    for cell in cells:
        if cell.metadata.get("calnotes", {}).get("role") == "check":
            if answer_line_m is not None:
                cell.source = cell.source.replace('"M": ...,', f'"M": {answer_line_m},')
            if answer_line_h is not None:
                cell.source = cell.source.replace('"halfwidth": ...,',
                                                  f'"halfwidth": {answer_line_h},')
    cells += [nbformat.v4.new_code_cell(src) for src in extra or []]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)


def test_check_notebook_on_a_folder_of_submissions(tmp_path, capsys):
    """Right and wrong answers (values by hand, as above) come out as such in the CSV; a
    student who prints the text of a right verdict without answering is not counted right
    (the verdicts are the library's, not text read from the notebook); an answer of the wrong
    form is 'unreadable'; a check cell that fails is 'error'."""
    import csv

    from calnotes import cli
    folder = tmp_path / "week3"
    folder.mkdir()
    _submission(folder / "alice.ipynb", 4612, 0.0351)
    _submission(folder / "bob.ipynb", 4000, 0.03)
    _submission(folder / "carol.ipynb", extra=['print("ex-001-dkw-m: right.")'])
    _submission(folder / "dave.ipynb", '"many"', "undefined_name")
    (folder / "erin.ipynb").write_text("{not json")
    out = tmp_path / "out"
    assert cli.main(["check-notebook", str(folder), "--out", str(out), "--timeout", "60"]) == 0
    with open(out / "summary.csv", newline="") as fh:
        rows = {row["student"]: row for row in csv.DictReader(fh)}
    assert rows["alice"]["ex-001-dkw-m"] == "right" and rows["alice"]["right"] == "1"
    assert rows["bob"]["ex-001-dkw-m"] == "not yet" and rows["bob"]["right"] == "0"
    assert rows["carol"]["ex-001-dkw-m"] == "not answered"
    assert rows["dave"]["ex-001-dkw-m"] == "error" and rows["dave"]["failed_cells"] == "1"
    assert rows["alice"]["failed_cells"] == "0"
    assert rows["erin"]["verdict"] == "unreadable"
    assert rows["erin"]["reason"].startswith("not a readable notebook")
    with open(out / "details.csv", newline="") as fh:
        details = {(r["student"], r["exercise"]): r for r in csv.DictReader(fh)}
    assert "solve sqrt(ln(2/delta)" in details[("bob", "ex-001-dkw-m")]["hints"]
    assert "NameError" in details[("dave", "ex-001-dkw-m")]["hints"]
    assert "ex-murphy" not in rows["alice"]             # no checker, no column
    assert "alice: 1 right" in capsys.readouterr().out


def test_check_notebook_refuses_what_is_not_a_submission(tmp_path, capsys):
    from calnotes import cli
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "empty").mkdir()
    for args, says in [([str(tmp_path / "missing")], "no such file or folder"),
                       ([str(tmp_path / "notes.txt")], "is not a notebook"),
                       ([str(tmp_path / "empty")], "holds no file"),
                       ([str(tmp_path / "notes.txt"), "--kernel", "nosuch"],
                        "no Jupyter kernel named 'nosuch'")]:
        assert cli.main(["check-notebook", *args]) == 2
        assert says in capsys.readouterr().err


def test_the_exercise_index_lists_every_exercise_of_the_book():
    from calnotes.book.coursework import exercise_index
    rows = exercise_index(ROOT)
    assert {r.label for r in rows} == set(BOOK)
    assert sum(r.checkable for r in rows) == len(exercises.labels())
    assert [r.week for r in rows] == sorted(r.week for r in rows)     # reading order
    first = rows[0]
    assert (first.docname, first.week) == ("book/foundations/measures", 1)
