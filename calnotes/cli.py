"""The ``calnotes`` command.

``calnotes chapters``
    List the book's chapters and their parameters (name, default, comment).
``calnotes run CHAPTER -p NAME VALUE [-p NAME VALUE ...] --out DIR [--force]``
    Execute one chapter with new parameter values (papermill); the executed notebook is
    written to ``DIR/CHAPTER.ipynb`` and never overwrites an existing file without ``--force``.
``calnotes evaluate PREDICTIONS [--labels FILE] [--logits] [--bins M ...] [--out DIR] [--force]``
    Accuracy, proper scores, binned calibration measures with their calibrated references for a
    predictions file (``.npz``, ``.npy`` pair, CSV; pickle only with ``--allow-pickle``); prints
    a table and, with ``--out``, writes ``report.json``, ``report.csv`` and ``reliability.png``.
"""

from __future__ import annotations

import argparse
import sys

from . import chapters as _chapters


def _cmd_chapters(args) -> int:
    found = _chapters.list_chapters(args.book)
    for chapter in found:
        print(f"{chapter.name}  ({chapter.docname}.md): {chapter.title}")
        for name, (value, comment) in chapter.parameters.items():
            note = f"  # {comment}" if comment else ""
            print(f"    -p {name} {value!r}{note}")
    return 0


def _cmd_run(args) -> int:
    parameters = {}
    for name, value in args.parameter or []:
        if name in parameters:
            raise ValueError(f"-p: parameter {name!r} given twice")
        parameters[name] = _chapters.parse_value(value)
    target = _chapters.run_chapter(args.chapter, parameters, args.out, force=args.force,
                                   root=args.book)
    print(f"wrote {target}")
    return 0


def _cmd_evaluate(args) -> int:
    from .evaluation import evaluate

    report = evaluate(args.predictions, labels=args.labels,
                      kind="logits" if args.logits else None, n_bins=args.bins,
                      out=args.out, force=args.force, allow_pickle=args.allow_pickle,
                      split=args.split)
    print(report.format_table())
    if args.out is not None:
        print(f"wrote {args.out}/report.json, report.csv, reliability.png")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="calnotes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--book", default=None,
                        help="folder holding _toc.yml (default: found from the current directory)")
    sub = parser.add_subparsers(dest="command", required=True)
    p_list = sub.add_parser("chapters", help="list chapters and their parameters")
    p_list.set_defaults(func=_cmd_chapters)
    p_run = sub.add_parser("run", help="execute one chapter with new parameters")
    p_run.add_argument("chapter", metavar="CHAPTER", help="chapter name, e.g. measures")
    p_run.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "VALUE"),
                       help="set a parameter (VALUE is a Python literal or a string)")
    p_run.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p_run.add_argument("--force", action="store_true", help="overwrite an existing output")
    p_run.set_defaults(func=_cmd_run)
    p_eval = sub.add_parser("evaluate", help="evaluate the calibration of a predictions file")
    p_eval.add_argument("predictions", metavar="PREDICTIONS",
                        help=".npz (labels + probs or logits), .npy (with --labels), .csv")
    p_eval.add_argument("--labels", metavar="FILE", help="labels .npy for a .npy predictions file")
    p_eval.add_argument("--logits", action="store_true",
                        help="the .npy/.csv predictions are logits, not probabilities")
    p_eval.add_argument("--bins", nargs="+", type=int, metavar="M",
                        help="bin counts (default: 15 20 100, those not above n)")
    p_eval.add_argument("--out", metavar="DIR", help="write report.json, report.csv and"
                        " reliability.png into DIR")
    p_eval.add_argument("--force", action="store_true", help="overwrite existing report files")
    p_eval.add_argument("--allow-pickle", action="store_true",
                        help="read a NN_calibration pickle file (only for files you trust:"
                        " unpickling can run code)")
    p_eval.add_argument("--split", choices=("test", "val"), default="test",
                        help="split of a NN_calibration pickle (default test)")
    p_eval.set_defaults(func=_cmd_evaluate)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError, ImportError, RuntimeError) as exc:
        print(f"calnotes: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
