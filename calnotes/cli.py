"""The ``calnotes`` command.

``calnotes chapters``
    List the book's chapters and their parameters (name, default, comment).
``calnotes run CHAPTER -p NAME VALUE [-p NAME VALUE ...] --out DIR [--force]``
    Execute one chapter with new parameter values (papermill); the executed notebook is
    written to ``DIR/CHAPTER.ipynb`` and never overwrites an existing file without ``--force``.
    Values are checked against the type of the chapter's defaults before anything runs; a
    failed run is written to ``DIR/CHAPTER.failed.ipynb`` (see :mod:`calnotes.book.chapters`).
``calnotes evaluate PREDICTIONS [--labels FILE] [--logits] [--bins M ...] [--out DIR] [--force]``
    Accuracy, proper scores, binned calibration measures with their calibrated references and
    utility calibration (``--no-utility`` skips it; ``--utility-samples M``, ``--seed S``) for a
    predictions file (``.npz``, ``.npy`` pair, CSV; pickle only with ``--allow-pickle``); prints
    a table (or, with ``--json``, the report as JSON) and, with ``--out``, writes
    ``report.json``, ``report.csv``, ``reliability.png``, ``sharpness.png`` and
    ``utility_ecdf.png``.  ``--out`` is checked before anything is computed, and the table is
    printed before the files are written.  The loader flags (``--logits``, ``--label-column``,
    ``--classes``, ...) go to :func:`calnotes.as_predictions`, which reads the file once the
    other options are checked; ``--timings`` prints how long each part took, and
    ``--progress`` / ``--no-progress`` force the progress bar on or off.
``calnotes check-notebook SUBMISSION.ipynb|FOLDER ... [--out DIR] [--timeout S]``
    Run submitted student notebooks (the course edition's, with a ``check(...)`` cell per
    exercise) and collect each exercise's verdict: right, not yet, not answered, unreadable,
    error; with ``--out``, ``summary.csv`` (student x exercise) and ``details.csv`` (see
    :mod:`calnotes.book.coursework`).
``calnotes --version``
    The calnotes version.

``--bins`` takes one or more counts (``--bins 15 20`` or ``--bins 15,20``); the predictions
file may come before or after them (``calnotes evaluate --bins 15 20 model.npz`` works: a
last ``--bins`` value that is not a number is read as the file).
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import sys
from pathlib import Path

from .book import chapters as _chapters
from ._validate import RENORMALIZE_TOL
from .evaluation import DEFAULT_BINS, PROGRESS_ENTRIES
from ._engine.significance import MIN_BOOTSTRAP, MIN_DRAWS


def _cmd_chapters(args) -> int:
    found = _chapters.list_chapters(args.book)
    for chapter in found:
        print(f"{chapter.name}  ({chapter.docname}{chapter.path.suffix}): {chapter.title}")
        for name, (value, comment) in chapter.parameters.items():
            note = f"  # {comment}" if comment else ""
            print(f"    -p {name} {value!r}{note}")
    return 0


def _cmd_run(args) -> int:
    chapter = _chapters.get_chapter(args.chapter, args.book)
    parameters = {}
    for name, value in args.parameter or []:
        if name in parameters:
            raise ValueError(f"-p: parameter {name!r} given twice")
        default = chapter.parameters[name][0] if name in chapter.parameters else None
        parameters[name] = _chapters.parse_value(value, default)
    try:
        target = _chapters.run_chapter(chapter.name, parameters, args.out, force=args.force,
                                       root=args.book)
    except KeyboardInterrupt:
        print(f"calnotes: run of {chapter.name} interrupted; its partial notebook was removed"
              f" and {Path(args.out) / (chapter.name + '.ipynb')} left as it was",
              file=sys.stderr)
        return 130
    print(f"wrote {target}")
    print(_chapters.summarize_run(chapter.name, target, parameters, args.book).text())
    return 0


def _cmd_check_notebook(args) -> int:
    from .book import coursework

    import signal

    def stop(signum, frame):
        raise KeyboardInterrupt

    exercises = _split_list(args.exercises, False) if args.exercises else None
    previous = signal.signal(signal.SIGTERM, stop)   # stopped like Ctrl-C: rows kept
    try:
        results = coursework.check_submissions(
            args.submission, timeout=args.timeout, notebook_timeout=args.notebook_timeout,
            kernel=args.kernel, jobs=args.jobs, memory_mb=args.memory,
            time_budget=args.time_budget, exercises=exercises, out=args.out,
            force=args.force, log=lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        kept = (f"; the rows checked so far are in {Path(args.out) / 'summary.csv'} (a rerun"
                " into the same --out resumes)" if args.out is not None else "")
        print(f"calnotes: check-notebook interrupted{kept}", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    if args.out is not None:
        print(f"wrote {Path(args.out) / 'summary.csv'}, {Path(args.out) / 'details.csv'}")
    else:
        for r in results:
            if r.verdict != "checked":
                print(f"{r.student}\t{r.verdict}\t{r.reason}")
            for label, row in r.verdicts.items():
                print(f"{r.student}\t{label}\t{row['status']}")
    return 0


def _split_list(text: str | None, numeric: bool):
    """``A,B,C`` as a list; with ``numeric`` (``--no-header``) digit strings become indexes."""
    if text is None:
        return None
    items = [item.strip() for item in text.split(",") if item.strip()]
    return [int(item) if numeric and item.isdigit() else item for item in items]


def _loader_options(args) -> dict:
    numeric = args.no_header
    options = {
        "label_column": (int(args.label_column) if numeric and args.label_column is not None
                         and args.label_column.isdigit() else args.label_column),
        "prob_columns": _split_list(args.prob_columns, numeric),
        "ignore_columns": _split_list(args.ignore_columns, numeric),
        "classes": _split_list(args.classes, False),
        "delimiter": args.delimiter,
        "header": not args.no_header,
        "renormalize": args.renormalize,
        "force_logits": args.force_logits,
    }
    if options["delimiter"] is not None:
        options["delimiter"] = {"\\t": "\t", "tab": "\t"}.get(options["delimiter"],
                                                               options["delimiter"])
    return options


def _cmd_evaluate(args) -> int:
    from .evaluation import check_out, evaluate
    from .evaluation.inputs import DeferredInput

    if args.out is not None:
        check_out(args.out, force=args.force)     # before anything is loaded or computed
    options = dict(_loader_options(args), kind="logits" if args.logits else None,
                   allow_pickle=args.allow_pickle, split=args.split)
    # read by evaluate once its own options are checked (calnotes.as_predictions passes on
    # only the options that differ from their defaults)
    source = DeferredInput(args.predictions, args.labels, options)
    report = evaluate(source, n_bins=args.bins, ties=args.ties, utility=not args.no_utility,
                      utility_samples=args.utility_samples, rng=args.seed,
                      significance=not args.no_significance, draws=args.draws,
                      bootstrap=args.bootstrap, progress=args.progress,
                      out_of_core=True if args.out_of_core else None)
    print(report.to_json() if args.json else report.format_table())
    sys.stdout.flush()                            # the table is out before anything is written
    if args.out is not None:
        try:
            written = report.write(args.out, force=args.force)
        except (OSError, RuntimeError) as exc:     # the message names the file and what was kept
            raise type(exc)(f"{exc} (the report is printed above)") from None
        print(f"wrote {', '.join(str(p) for p in written)}",
              file=sys.stderr if args.json else sys.stdout)
    if args.timings:
        print(report.format_timings(), file=sys.stderr if args.json else sys.stdout)
    return 0


def _version() -> str:
    from . import __version__
    return f"calnotes {__version__}"


def _is_count(token: str) -> bool:
    """``15`` or ``15,20`` (signs allowed: the range is checked by evaluate, naming --bins)."""
    parts = [part.strip() for part in token.split(",") if part.strip()]
    try:
        return bool(parts) and all(isinstance(int(part), int) for part in parts)
    except ValueError:
        return False


def _fix_evaluate_args(args) -> None:
    """``--bins 15 20 FILE``: take the file back from ``--bins``; parse the counts."""
    sub = args.parser
    if args.bins is not None:
        tokens = list(args.bins)
        if args.predictions is None and tokens and not _is_count(tokens[-1]):
            args.predictions = tokens.pop()
        counts = []
        for token in tokens:
            if not _is_count(token):
                sub.error(f"argument --bins: {token!r} is not a whole number; give the counts"
                          " after --bins (--bins 15 20, or --bins 15,20) and the predictions"
                          " file before --bins or after the counts")
            counts += [int(part) for part in token.split(",") if part.strip()]
        if not counts:
            sub.error("argument --bins: expected at least one bin count")
        args.bins = counts
    if args.renormalize is not None and args.renormalize is not True:
        try:
            args.renormalize = float(args.renormalize)
        except ValueError:
            if args.predictions is not None:
                sub.error(f"argument --renormalize: {args.renormalize!r} is not a number"
                          " (the optional tolerance)")
            args.predictions, args.renormalize = args.renormalize, True
    elif args.renormalize is None:
        from .evaluation.inputs import as_predictions
        args.renormalize = _default(as_predictions, "renormalize")
    if args.predictions is None:
        sub.error("the following arguments are required: PREDICTIONS")


def _default(function, name: str):
    """The default of ``function``'s parameter ``name``.  Every default of the command line is
    the library's (this, or a constant the library uses), never a copy of its value:
    tests/test_cli_defaults.py compares each option with the parameter it sets."""
    return inspect.signature(function).parameters[name].default


def build_parser() -> argparse.ArgumentParser:
    from .book.coursework import MAX_JOBS, check_submissions
    from .evaluation import evaluate
    from .evaluation.inputs import as_predictions

    def checks(name):
        return _default(check_submissions, name)

    def evaluates(name):
        return _default(evaluate, name)

    parser = argparse.ArgumentParser(prog="calnotes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=_version())
    parser.add_argument("--book", default=_default(_chapters.list_chapters, "root"),
                        help="folder holding _toc.yml (default: found from the current directory)")
    sub = parser.add_subparsers(dest="command", required=True)
    p_list = sub.add_parser("chapters", help="list chapters and their parameters")
    p_list.set_defaults(func=_cmd_chapters)
    p_run = sub.add_parser("run", help="execute one chapter with new parameters")
    p_run.add_argument("chapter", metavar="CHAPTER", help="chapter name, e.g. measures")
    p_run.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "VALUE"),
                       help="set a parameter (VALUE is a Python literal or a string; checked"
                       " against the type of the chapter's default)")
    p_run.add_argument("--out", required=True, metavar="DIR",
                       help="output folder (not in the book's sources, the calnotes package,"
                       " the tests or the repository's root; one run at a time)")
    p_run.add_argument("--force", action="store_true",
                       default=_default(_chapters.run_chapter, "force"),
                       help="overwrite an existing output (never a source file)")
    p_run.set_defaults(func=_cmd_run)
    p_check = sub.add_parser(
        "check-notebook", help="run submitted student notebooks and compute the verdicts of"
        " their exercise checks (runs the students' code: see the description)",
        description="Run each submitted notebook and compute the verdicts of its check(...)"
        " cells from the answers it gave. A submission is code: it runs with your rights, in"
        " a private copy, in its own process with time and memory limits, and, where the"
        " machine allows (Linux user namespaces), without network, with every file read-only"
        " except its scratch folder and with the submissions, the output folder and the book"
        " hidden; the first line printed says what is contained. Run exams in a container.")
    p_check.add_argument("submission", metavar="SUBMISSION", nargs="+",
                         help="a submitted .ipynb, or a folder of them (one per student: the"
                         " file name is the student); every file in a folder gets a row")
    p_check.add_argument("--out", default=checks("out"), metavar="DIR",
                         help="write summary.csv (student x exercise)"
                         " and details.csv (with the hints) into DIR, after every notebook;"
                         " a rerun into DIR resumes (unchanged notebooks keep their rows)")
    p_check.add_argument("--force", action="store_true", default=checks("force"),
                         help="start DIR afresh instead of resuming an earlier check")
    p_check.add_argument("--timeout", type=int, default=checks("timeout"), metavar="S",
                         help="seconds per cell before it is interrupted (default"
                         f" {checks('timeout')})")
    p_check.add_argument("--notebook-timeout", type=int, default=checks("notebook_timeout"),
                         metavar="S", help="seconds per notebook in all before it is stopped"
                         f" (default {checks('notebook_timeout')})")
    p_check.add_argument("--time-budget", type=float, default=checks("time_budget"),
                         metavar="S",
                         help="seconds for the whole batch; notebooks not started by then are"
                         " 'not checked' (a rerun into the same --out resumes)")
    p_check.add_argument("--jobs", type=int, default=checks("jobs"), metavar="N",
                         help="notebooks run at once (default: the cores available, at most"
                         f" {MAX_JOBS})")
    p_check.add_argument("--memory", type=int, default=checks("memory_mb"), metavar="MB",
                         help="memory (address space) per process of a submission (default"
                         f" {checks('memory_mb')})")
    p_check.add_argument("--exercises", default=checks("exercises"), metavar="LABEL,...",
                         help="the exercises assigned (default: those in at least half of the"
                         " notebooks); a notebook with none of them is 'other notebook'")
    p_check.add_argument("--kernel", default=checks("kernel"),
                         help="Jupyter kernel that runs the notebooks (default"
                         f" {checks('kernel')}: this Python, with calnotes)")
    p_check.set_defaults(func=_cmd_check_notebook)
    p_eval = sub.add_parser("evaluate", help="evaluate the calibration of a predictions file")
    p_eval.add_argument("predictions", metavar="PREDICTIONS", nargs="?",
                        help=".npz (labels + probs or logits), .npy (with --labels), .csv,"
                        " .parquet/.feather (with pyarrow)")
    p_eval.add_argument("--labels", metavar="FILE", help="labels file for a .npy predictions file")
    p_eval.add_argument("--logits", action="store_true",
                        help="the .npy/.csv predictions are logits, not probabilities")
    p_eval.add_argument("--bins", nargs="+", action="extend", metavar="M",
                        help="bin counts (default:"
                        f" {' '.join(map(str, DEFAULT_BINS))}); --bins 15 20 or --bins 15,20"
                        " (a repeated --bins adds its counts: --bins 15 --bins 20 is --bins"
                        " 15 20); counts above n get the equal-width ECE rows only")
    p_eval.add_argument("--out", metavar="DIR", help="write report.json, report.csv,"
                        " reliability.png, sharpness.png and utility_ecdf.png into DIR (checked"
                        " before computing; written into a temporary folder beside DIR and"
                        " moved in place only when complete)")
    p_eval.add_argument("--force", action="store_true",
                        help="replace the report files of an earlier run (those this run does"
                        " not write are removed, so DIR never mixes two reports)")
    p_eval.add_argument("--json", action="store_true",
                        help="print the report as JSON on stdout instead of the table")
    p_eval.add_argument("--allow-pickle", action="store_true",
                        help="read a NN_calibration pickle file (only for files you trust:"
                        " unpickling can run code)")
    p_eval.add_argument("--split", choices=("test", "val"),
                        default=_default(as_predictions, "split"),
                        help="split of a NN_calibration pickle (default"
                        f" {_default(as_predictions, 'split')})")
    csv_opts = p_eval.add_argument_group("CSV and loader options")
    csv_opts.add_argument("--label-column", metavar="NAME",
                          help="name of the label column (with --no-header: its 0-based index)")
    csv_opts.add_argument("--prob-columns", metavar="A,B,...",
                          help="the probability (or logit) columns, in class order")
    csv_opts.add_argument("--ignore-columns", metavar="A,B,...",
                          help="columns to skip (an id column, a pandas index)")
    csv_opts.add_argument("--delimiter", metavar="D",
                          help="field separator of a CSV file (e.g. ';'; '\\t' or 'tab' for"
                          " tabs)")
    csv_opts.add_argument("--classes", metavar="A,B,...",
                          help="class names in column order, for string labels (default: the"
                          " probability columns' names when the labels are those names, else,"
                          " for two classes only, the labels in sorted order, scikit-learn's"
                          " classes_ order; more classes need --classes; the mapping is"
                          " printed and saved)")
    csv_opts.add_argument("--no-header", action="store_true",
                          help="the CSV file has no header row")
    csv_opts.add_argument("--renormalize", nargs="?", const=True, default=None, metavar="TOL",
                          help="divide rows by their sums when they are within TOL of 1"
                          f" (rounded probabilities; default TOL {RENORMALIZE_TOL:g}); the report"
                          " notes it")
    csv_opts.add_argument("--force-logits", action="store_true",
                          help="with --logits: read the predictions as logits even if they"
                          " look like probabilities")
    p_eval.add_argument("--ties", choices=("average", "position"), default=evaluates("ties"),
                        help="equal-mass tie rule: average over the orders of tied predictions"
                        " (default; independent of the row order) or eq. (1) with ties in"
                        " input order")
    utility = p_eval.add_argument_group("utility calibration")
    utility.add_argument("--no-utility", action="store_true",
                         help="skip utility calibration (UC over U_TCE, U_CWE, U_topK and the"
                         " eCDF over sampled U_lin, U_rank utilities)")
    utility.add_argument("--utility-samples", type=int, default=evaluates("utility_samples"),
                         metavar="M", help="utilities sampled from each of U_lin and U_rank for"
                         f" the eCDF (default {evaluates('utility_samples')})")
    utility.add_argument("--seed", type=int, default=evaluates("rng"), metavar="S",
                         help="seed of the sampled utilities and of the p-values' and intervals'"
                         f" draws (default {evaluates('rng')}: the same command gives the same"
                         " numbers)")
    sig = p_eval.add_argument_group("significance")
    sig.add_argument("--no-significance", action="store_true",
                     help="skip the p-values under the calibrated null and the bootstrap"
                     " intervals")
    sig.add_argument("--draws", type=int, default=evaluates("draws"), metavar="R",
                     help="Monte Carlo draws of the calibrated null where no exact law is"
                     " available: class-wise rows, equal-mass bins split by ties (default"
                     f" {evaluates('draws')}, at least {MIN_DRAWS}).  R also caps the width"
                     " of an exact p-value's bracket at 1/(2 sqrt R): a larger R sends more"
                     " confidence and binary rows with many bins to Monte Carlo")
    sig.add_argument("--bootstrap", type=int, default=evaluates("bootstrap"), metavar="B",
                     help="bootstrap resamples for the intervals (default"
                     f" {evaluates('bootstrap')}; 0: none; otherwise at least {MIN_BOOTSTRAP})")
    p_eval.add_argument("--timings", action="store_true",
                        help="print how long each part took (loading, scores, binned rows,"
                        " SmoothECE, utility, writing; also in the JSON's timings)")
    p_eval.add_argument("--progress", action=argparse.BooleanOptionalAction,
                        default=evaluates("progress"),
                        help="a progress bar on stderr over the whole computation (default:"
                        f" on a terminal for inputs of at least {PROGRESS_ENTRIES:,}"
                        " probabilities)")
    scale = p_eval.add_argument_group("scale")
    scale.add_argument("--out-of-core", action="store_true",
                       help="evaluate in bounded memory with Dask (pip install"
                       " 'calnotes[scale]'): a .npy file is memory-mapped and read in row"
                       " chunks; a folder of shards is always read this way.  Exact"
                       " equal-mass rows and the references; no p-values, SmoothECE, utility"
                       " part or figures")
    p_eval.set_defaults(func=_cmd_evaluate, parser=p_eval)
    return parser


def _check_book(book) -> None:
    if book is None:
        return
    path = Path(book)
    if not path.is_dir():
        raise FileNotFoundError(f"--book: {book}: no such folder")
    if not (path / "_toc.yml").is_file():
        raise FileNotFoundError(f"--book: {book} holds no _toc.yml (the book's table of"
                                " contents)")


def _quiet_broken_pipe() -> int:
    """The reader of stdout went away (``calnotes chapters | head -1``): stop quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())   # nothing more is written to the closed pipe
    except (OSError, ValueError, AttributeError):
        pass
    return 0


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "evaluate":
        _fix_evaluate_args(args)
    try:
        _check_book(args.book)
        code = args.func(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except MemoryError as exc:                   # numpy's _ArrayMemoryError names the array
        said = f" ({exc})" if str(exc) else ""
        advice = ("; evaluate a large .npy file with --out-of-core, which reads it in row"
                  " chunks, or use a machine with more memory" if args.command == "evaluate"
                  else "")
        print(f"calnotes: error: out of memory{said}{advice}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError, ImportError, RuntimeError) as exc:
        print(f"calnotes: error: {_cli_wording(str(exc))}", file=sys.stderr)
        return 2


#: ``force=True (command line: --force)``: an API argument (with its value) followed by the
#: command-line flag that sets it, as the library's messages name both.
_API_AND_FLAG = re.compile(
    r"\b[A-Za-z_][\w.]*(?:=(?:\[[^\]]*\]|'[^']*'|\"[^\"]*\"|[^\s,;()]+))?"
    r" \(command line: ([^()]*)\)")


def _cli_wording(message: str) -> str:
    """A library message in the command line's words: ``pass force=True (command line:
    --force)`` becomes ``pass --force``; a remaining ``(command line: X)`` becomes ``(X)``."""
    import inspect

    try:
        from .evaluation import evaluate
        from .evaluation.inputs import as_predictions
        names = (set(inspect.signature(evaluate).parameters)
                 | set(inspect.signature(as_predictions).parameters))
    except Exception:  # noqa: BLE001 - only the wording is at stake, never the error itself
        names = set()

    def flag(match):
        token = match.group(0).split(" (command line:")[0]
        if "=" in token or token in names:
            return match.group(1)
        return match.group(0)
    message = _API_AND_FLAG.sub(flag, message)
    message = _API_SETTING.sub(lambda match: _API_SETTINGS[match.group(0)], message)
    message = _API_OPTION_FIELD.sub(lambda match: _API_OPTIONS[match.group(1)], message)
    return re.sub(r"\(command line: ([^()]*)\)", r"(\1)", message)


#: Settings of the API that messages name without a command-line form, and their flags.
_API_SETTINGS = {"kind='logits'": "--logits", 'kind="logits"': "--logits",
                 "renormalize=True": "--renormalize", "force_logits=True": "--force-logits",
                 "allow_pickle=True": "--allow-pickle", "force=True": "--force",
                 "header=False": "--no-header", "out_of_core=True": "--out-of-core"}
_API_SETTING = re.compile("|".join(re.escape(text) for text in _API_SETTINGS))
#: Options of evaluate / as_predictions and the flags that set them: a message that starts
#: with the option's name (``label_column: ...``, also after a file's ``path: ``) names the
#: flag instead.
_API_OPTIONS = {"label_column": "--label-column", "prob_columns": "--prob-columns",
                "ignore_columns": "--ignore-columns", "delimiter": "--delimiter",
                "classes": "--classes", "renormalize": "--renormalize",
                "force_logits": "--force-logits", "allow_pickle": "--allow-pickle",
                "split": "--split", "header": "--no-header", "kind": "--logits",
                "n_bins": "--bins", "utility_samples": "--utility-samples", "rng": "--seed",
                "draws": "--draws", "bootstrap": "--bootstrap", "ties": "--ties",
                "out_of_core": "--out-of-core", "out": "--out", "force": "--force"}
_API_OPTION_FIELD = re.compile(r"(?:^|(?<=: ))(" + "|".join(_API_OPTIONS) + r")(?=: )")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
