"""Every default of the ``calnotes`` command is the library's.

Each option of each subcommand is compared with the parameter of the library function it
sets (``inspect.signature``), and a run with no options is checked to pass exactly the
library's defaults.  A new option must be added to :data:`LIBRARY` or :data:`COMMAND_ONLY`,
and a default changed on one side only is reported; the negative controls at the end show
that the comparison catches both.
"""

import argparse
import functools
import inspect
import types
from pathlib import Path

import pytest

from calnotes import cli, evaluation
from calnotes.book import chapters, coursework
from calnotes.evaluation import inputs
from calnotes._engine import significance
from calnotes._validate import RENORMALIZE_TOL


def same(value):
    return value


def negated(value):
    return not value


#: ``(subcommand, dest) -> (function, parameter, what the library receives when the option is
#: not given, as a function of the option's default)``; subcommand ``""`` is the top level.
LIBRARY = {
    ("", "book"): (chapters.list_chapters, "root", same),
    ("run", "force"): (chapters.run_chapter, "force", same),
    ("check-notebook", "out"): (coursework.check_submissions, "out", same),
    ("check-notebook", "force"): (coursework.check_submissions, "force", same),
    ("check-notebook", "timeout"): (coursework.check_submissions, "timeout", same),
    ("check-notebook", "notebook_timeout"): (coursework.check_submissions, "notebook_timeout",
                                              same),
    ("check-notebook", "time_budget"): (coursework.check_submissions, "time_budget", same),
    ("check-notebook", "jobs"): (coursework.check_submissions, "jobs", same),
    ("check-notebook", "memory"): (coursework.check_submissions, "memory_mb", same),
    ("check-notebook", "exercises"): (coursework.check_submissions, "exercises", same),
    ("check-notebook", "kernel"): (coursework.check_submissions, "kernel", same),
    ("evaluate", "labels"): (inputs.as_predictions, "labels", same),
    ("evaluate", "logits"): (inputs.as_predictions, "kind",
                             lambda flag: "logits" if flag else None),
    ("evaluate", "bins"): (evaluation.evaluate, "n_bins", same),
    ("evaluate", "out"): (evaluation.evaluate, "out", same),
    ("evaluate", "force"): (evaluation.evaluate, "force", same),
    ("evaluate", "allow_pickle"): (inputs.as_predictions, "allow_pickle", same),
    ("evaluate", "split"): (inputs.as_predictions, "split", same),
    ("evaluate", "label_column"): (inputs.as_predictions, "label_column", same),
    ("evaluate", "prob_columns"): (inputs.as_predictions, "prob_columns", same),
    ("evaluate", "ignore_columns"): (inputs.as_predictions, "ignore_columns", same),
    ("evaluate", "delimiter"): (inputs.as_predictions, "delimiter", same),
    ("evaluate", "classes"): (inputs.as_predictions, "classes", same),
    ("evaluate", "no_header"): (inputs.as_predictions, "header", negated),
    # None until parsed: --renormalize may take the file name (see cli._fix_evaluate_args)
    ("evaluate", "renormalize"): (inputs.as_predictions, "renormalize",
                                  lambda value: False if value is None else value),
    ("evaluate", "force_logits"): (inputs.as_predictions, "force_logits", same),
    ("evaluate", "ties"): (evaluation.evaluate, "ties", same),
    ("evaluate", "no_utility"): (evaluation.evaluate, "utility", negated),
    ("evaluate", "utility_samples"): (evaluation.evaluate, "utility_samples", same),
    ("evaluate", "seed"): (evaluation.evaluate, "rng", same),
    ("evaluate", "no_significance"): (evaluation.evaluate, "significance", negated),
    ("evaluate", "draws"): (evaluation.evaluate, "draws", same),
    ("evaluate", "bootstrap"): (evaluation.evaluate, "bootstrap", same),
    ("evaluate", "progress"): (evaluation.evaluate, "progress", same),
    # the flag only turns it on; not given, evaluate decides (a Dask input, a shard folder)
    ("evaluate", "out_of_core"): (evaluation.evaluate, "out_of_core",
                                  lambda flag: True if flag else None),
}

#: Options with no library parameter behind them: what the command prints, or a required
#: option without a default.
COMMAND_ONLY = {
    ("run", "parameter"),          # -p NAME VALUE, collected into run_chapter's parameters
    ("run", "out"),                # required
    ("evaluate", "json"),          # prints the report as JSON instead of the table
    ("evaluate", "timings"),       # prints the report's timings
}


def subparsers(parser: argparse.ArgumentParser) -> dict:
    """``{"": parser, name: subparser, ...}``."""
    found = {"": parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def options(parser: argparse.ArgumentParser) -> dict:
    """``{(subcommand, dest): action}`` for every option (not positional, help or version)."""
    found = {}
    for command, sub in subparsers(parser).items():
        for action in sub._actions:
            if (not action.option_strings or isinstance(action, (argparse._HelpAction,
                                                                 argparse._VersionAction))):
                continue
            found[command, action.dest] = action
    return found


def default_mismatches(parser: argparse.ArgumentParser, library=None,
                       command_only=None) -> list:
    """What differs between ``parser``'s defaults and the library's: one line per option
    whose default is not its parameter's, per option in neither table, and per table entry
    that names no option or no parameter."""
    library = LIBRARY if library is None else library
    command_only = COMMAND_ONLY if command_only is None else command_only
    found = options(parser)
    problems = []
    for key, action in found.items():
        flag = "/".join(action.option_strings)
        where = f"{key[0] or 'calnotes'} {flag}"
        if key in command_only:
            continue
        if key not in library:
            problems.append(f"{where}: not in LIBRARY or COMMAND_ONLY")
            continue
        function, name, passed = library[key]
        parameters = inspect.signature(function).parameters
        if name not in parameters:
            problems.append(f"{where}: {function.__qualname__} has no parameter {name!r}")
            continue
        wanted = parameters[name].default
        if wanted is inspect.Parameter.empty:
            problems.append(f"{where}: {function.__qualname__}({name}) has no default")
            continue
        got = passed(action.default)
        if got != wanted or type(got) is not type(wanted):
            problems.append(f"{where}: the command line's default gives {name}={got!r},"
                            f" {function.__qualname__}'s default is {wanted!r}")
    for key in set(library) | set(command_only):
        if key not in found:
            problems.append(f"{key}: in the tables but not an option of the parser")
    return problems


def test_every_option_default_is_the_librarys():
    assert default_mismatches(cli.build_parser()) == []


def test_the_constants_are_the_signature_defaults():
    """The constants the help texts name are the ones the library functions default to."""
    sig = inspect.signature(evaluation.evaluate).parameters
    assert sig["draws"].default == significance.DEFAULT_DRAWS
    assert sig["bootstrap"].default == significance.DEFAULT_BOOTSTRAP
    assert sig["utility_samples"].default == evaluation.DEFAULT_UTILITY_SAMPLES
    assert sig["n_bins"].default is None          # None: DEFAULT_BINS


def test_help_texts_state_the_library_defaults():
    """Where a help text states a default it is the library's value (not a copy)."""
    found = options(cli.build_parser())
    for (command, dest), action in found.items():
        if action.default is None or isinstance(action.default, bool):
            continue
        assert str(action.default) in action.help, (command, dest)
    helps = {key: action.help for key, action in found.items()}
    assert " ".join(map(str, evaluation.DEFAULT_BINS)) in helps["evaluate", "bins"]
    assert f"{RENORMALIZE_TOL:g}" in helps["evaluate", "renormalize"]
    assert f"{evaluation.PROGRESS_ENTRIES:,}" in helps["evaluate", "progress"]
    assert f"at most {coursework.MAX_JOBS}" in helps["check-notebook", "jobs"]
    assert f"at least {significance.MIN_DRAWS}" in helps["evaluate", "draws"]
    assert f"at least {significance.MIN_BOOTSTRAP}" in helps["evaluate", "bootstrap"]


def test_draws_help_names_the_exact_and_monte_carlo_switch():
    """--draws also caps the exact brackets (calnotes._engine.significance.exact_bracket_limit) and
    sets the replications of the tie-split rows: its help says both."""
    text = " ".join(options(cli.build_parser())["evaluate", "draws"].help.split())
    assert "split by ties" in text
    assert "1/(2 sqrt R)" in text and "to Monte Carlo" in text
    assert significance.exact_bracket_limit(100) == pytest.approx(1 / (2 * 100 ** 0.5))


def _library_defaults(function, received: dict, skip=()) -> list:
    """The arguments in ``received`` that differ from ``function``'s defaults."""
    parameters = inspect.signature(function).parameters
    return [(name, value, parameters[name].default) for name, value in received.items()
            if name not in skip and parameters[name].default is not inspect.Parameter.empty
            and value != parameters[name].default]


def test_evaluate_without_options_passes_the_library_defaults(monkeypatch, capsys):
    """``calnotes evaluate FILE`` calls evaluate and as_predictions with their defaults."""
    calls, real = [], evaluation.evaluate

    @functools.wraps(real)                     # the parser reads its signature
    def fake_evaluate(source, **kwargs):
        calls.append((source, kwargs))
        return types.SimpleNamespace(format_table=lambda: "table", to_json=lambda: "{}",
                                     format_timings=lambda: "")

    monkeypatch.setattr(evaluation, "evaluate", fake_evaluate)
    assert cli.main(["evaluate", "model.npz"]) == 0
    (source, kwargs), = calls
    assert _library_defaults(real, kwargs) == []
    # out and force go to check_out and EvaluationReport.write instead
    assert set(kwargs) == {name for function, name, _ in LIBRARY.values()
                           if function is real} - {"out", "force"}
    assert source.predictions == "model.npz"
    assert _library_defaults(inputs.as_predictions,
                             dict(source.options, labels=source.labels)) == []
    assert set(source.options) | {"labels"} == {
        name for function, name, _ in LIBRARY.values() if function is inputs.as_predictions}


def test_check_notebook_without_options_passes_the_library_defaults(monkeypatch, tmp_path,
                                                                      capsys):
    calls, real = [], coursework.check_submissions

    @functools.wraps(real)
    def fake_check(paths, **kwargs):
        calls.append(kwargs)
        return []

    monkeypatch.setattr(coursework, "check_submissions", fake_check)
    assert cli.main(["check-notebook", str(tmp_path / "a.ipynb")]) == 0
    kwargs, = calls
    assert _library_defaults(real, kwargs, skip={"log"}) == []
    assert set(kwargs) - {"log"} == {name for function, name, _ in LIBRARY.values()
                                     if function is real}


def test_run_without_options_passes_the_library_defaults(monkeypatch, tmp_path, capsys):
    calls, real = [], chapters.run_chapter

    @functools.wraps(real)
    def fake_run(name, parameters, out_dir, **kwargs):
        calls.append(kwargs)
        return Path(out_dir) / f"{name}.ipynb"

    monkeypatch.setattr(chapters, "run_chapter", fake_run)
    monkeypatch.setattr(chapters, "summarize_run",
                        lambda *args: types.SimpleNamespace(text=lambda: ""))
    assert cli.main(["run", "benchmarks", "--out", str(tmp_path)]) == 0
    kwargs, = calls
    assert _library_defaults(real, kwargs) == []
    assert kwargs == {"force": False, "root": None}


# negative controls: the comparison reports what it exists to catch

def _action(parser, command, dest):
    return options(parser)[command, dest]


def test_control_a_wrong_command_line_default_is_reported():
    parser = cli.build_parser()
    _action(parser, "evaluate", "draws").default = significance.DEFAULT_DRAWS + 1
    _action(parser, "check-notebook", "memory").default += 1
    problems = default_mismatches(parser)
    assert len(problems) == 2
    assert any(p.startswith("evaluate --draws:") and "draws=" in p for p in problems)
    assert any(p.startswith("check-notebook --memory:") and "memory_mb=" in p
               for p in problems)


def test_control_a_changed_library_default_is_reported(monkeypatch):
    """The parser built before a library default changes disagrees with it afterwards."""
    parser = cli.build_parser()
    sig = inspect.signature(evaluation.evaluate)
    changed = sig.replace(parameters=[
        p.replace(default=p.default * 2) if p.name == "bootstrap" else p
        for p in sig.parameters.values()])
    monkeypatch.setattr(evaluation.evaluate, "__signature__", changed, raising=False)
    problems = default_mismatches(parser)
    assert len(problems) == 1 and problems[0].startswith("evaluate --bootstrap:")
    assert default_mismatches(cli.build_parser()) == []    # a new parser follows it


def test_control_an_unlisted_option_and_a_stale_entry_are_reported():
    parser = cli.build_parser()
    subparsers(parser)["evaluate"].add_argument("--new-option", type=int, default=3)
    stale = {**LIBRARY, ("evaluate", "gone"): (evaluation.evaluate, "draws", same)}
    problems = default_mismatches(parser, library=stale)
    assert sorted(problems) == sorted([
        "evaluate --new-option: not in LIBRARY or COMMAND_ONLY",
        "('evaluate', 'gone'): in the tables but not an option of the parser"])


def test_control_a_wrong_conversion_is_reported():
    """A flag read the wrong way round (``--no-utility`` as ``utility``) is a mismatch."""
    wrong = {**LIBRARY, ("evaluate", "no_utility"): (evaluation.evaluate, "utility", same)}
    problems = default_mismatches(cli.build_parser(), library=wrong)
    assert len(problems) == 1 and problems[0].startswith("evaluate --no-utility:")
