"""What runs inside the checker's process for one submission: execute the notebook in a fresh
kernel, read the answers its ``check(...)`` calls showed, and compute every verdict here.

The kernel is the student's: it may print anything, write anything into its scratch folder,
kill itself or ignore interrupts.  Nothing it says is taken as a verdict.  It can only show
answers (:data:`calnotes.book._answers.MIME` outputs, read from the executed notebook as the
kernel sent them), and this process decodes each answer without running code
(:func:`calnotes.book._answers.decode`) and calls :func:`calnotes.book.exercises.check` on it itself.
The result goes back to the checker through a pipe that the kernel does not inherit.

:func:`run` is called by :mod:`calnotes.book.coursework` (through :mod:`calnotes.book._sandbox`); it
returns a JSON-ready dict and never raises.
"""

from __future__ import annotations

import json
import os

__all__ = ["run", "main", "check_cells"]

#: Seconds a kernel gets to answer a trivial cell after a timed-out cell was interrupted; a
#: kernel that does not (it ignores SIGINT) runs no more cells.
PROBE_SECONDS = 10

#: Most answers read from one notebook: a student's loop calling check() more often than
#: this gains nothing (the last answer per exercise counts).
MAX_ANSWERS = 10_000


def check_cells(nb) -> dict:
    """``{label: index of its check cell}``: the course edition's tagged check cells, or any
    code cell that calls ``check("label", ...)``.  Malformed metadata is ignored."""
    import re
    out = {}
    for index, cell in enumerate(nb.cells):
        if cell.get("cell_type") != "code":
            continue
        meta = cell.get("metadata", {}).get("calnotes", {})
        label = meta.get("exercise") if isinstance(meta, dict) else None
        if isinstance(meta, dict) and meta.get("role") == "check" and isinstance(label, str):
            out[label] = index
            continue
        source = cell.get("source", "")
        for label in re.findall(r"""\bcheck\(\s*["']([\w.-]+)["']""",
                                source if isinstance(source, str) else ""):
            out.setdefault(label, index)
    return out


def _error_of(cell) -> str:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename')}: {str(output.get('evalue'))[:300]}"
    return ""


def _execute(nb, config: dict) -> tuple:
    """Run the code cells in order; returns (indices run, why the run stopped or "")."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    from .chapters import _kernel_manager_class

    timeout = int(config["cell_timeout"])
    timed_out = {"ename": "CellTimeoutError",
                 "evalue": f"the cell ran past {timeout} s and was interrupted",
                 "traceback": []}
    manager = _kernel_manager_class()
    client = NotebookClient(nb, timeout=timeout, kernel_name=config["kernel"],
                            allow_errors=True, interrupt_on_timeout=True,
                            error_on_timeout=timed_out, startup_timeout=120,
                            resources={"metadata": {"path": config["workdir"]}},
                            **({"kernel_manager_class": manager} if manager else {}))
    replies = {}
    client.on_cell_executed = lambda cell, cell_index, execute_reply: replies.update(
        last=execute_reply)
    ran, stopped = [], ""
    try:
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                try:
                    client.execute_cell(cell, index)
                except DeadKernelError:
                    ran.append(index)
                    stopped = f"the kernel died in cell {index + 1}; later cells were not run"
                    break
                except CellTimeoutError:
                    ran.append(index)
                    stopped = (f"cell {index + 1} produced no output for too long; later"
                               " cells were not run")
                    break
                ran.append(index)
                reply = replies.pop("last", None) or {}
                if reply.get("content", {}).get("ename") == "CellTimeoutError":
                    cell.outputs.append(nbformat.v4.new_output(
                        "error", ename="CellTimeoutError", evalue=timed_out["evalue"],
                        traceback=[]))
                    replies.clear()
                    probe = nbformat.v4.new_code_cell("pass")
                    client.timeout = PROBE_SECONDS
                    try:
                        client.execute_cell(probe, index)
                    except (DeadKernelError, CellTimeoutError):
                        probe.outputs = [{"output_type": "error", "ename": "x"}]
                    client.timeout = timeout
                    nb.cells[index] = cell               # nbclient stored the probe there
                    stuck = replies.pop("last", {}).get("content", {}).get("ename")
                    if _error_of(probe) or stuck == "CellTimeoutError":
                        stopped = (f"cell {index + 1} ran past {timeout} s and the kernel did"
                                   " not stop when interrupted; later cells were not run")
                        break
    except DeadKernelError:
        stopped = stopped or "the kernel died; later cells were not run"
    except RuntimeError as exc:            # nbclient: the kernel did not start
        if not ran:
            raise
        stopped = stopped or f"{str(exc).splitlines()[0] if str(exc) else exc!r}"
    return ran, stopped


def _answers(nb) -> dict:
    """``{label: encoded answer}``: the last answer per exercise shown by the notebook."""
    from . import _answers, exercises
    known, found, count = set(exercises.labels()), {}, 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") not in ("display_data", "execute_result"):
                continue
            payload = output.get("data", {}).get(_answers.MIME)
            if isinstance(payload, str):      # nbformat may keep JSON as text
                try:
                    payload = json.loads(payload)
                except ValueError:
                    continue
            if not isinstance(payload, dict) or payload.get("label") not in known:
                continue
            count += 1
            if count > MAX_ANSWERS:
                return found
            found.pop(payload["label"], None)
            found[payload["label"]] = payload.get("answer")
    return found


def _verdict(label: str, encoded) -> dict:
    from . import _answers, exercises
    verdict = exercises.check(label, _answers.decode(encoded))
    return {"label": label, "status": verdict.status, "parts": verdict.parts,
            "hints": verdict.hints, "problem": verdict.problem}


def run(config: dict) -> dict:
    """Execute ``config["notebook"]`` and compute its verdicts (see the module docstring)."""
    import nbformat

    from . import exercises
    result = {"verdicts": {}, "failed_cells": 0, "stopped": "", "error": ""}
    try:
        nb = nbformat.read(config["notebook"], as_version=4)
        cells = check_cells(nb)
        os.environ[exercises.CHECKER] = "1"          # the kernel shows its answers
        try:
            ran, result["stopped"] = _execute(nb, config)
        finally:
            os.environ.pop(exercises.CHECKER, None)  # this process only computes verdicts
        failed = [i for i in ran if _error_of(nb.cells[i])]
        result["failed_cells"] = len(failed)
        if failed:
            result["first_error"] = f"cell {failed[0] + 1}: {_error_of(nb.cells[failed[0]])}"
        answers = _answers(nb)
        for label, encoded in answers.items():
            result["verdicts"][label] = _verdict(label, encoded)
        for label, index in cells.items():
            if label in result["verdicts"]:
                continue
            error = _error_of(nb.cells[index]) if index in ran else ""
            status = "error" if error else ("not answered" if index in ran else "not run")
            result["verdicts"][label] = {"label": label, "status": status,
                                         "hints": {"cell": error} if error else {}}
    except Exception as exc:  # noqa: BLE001 - reported as this submission's row
        text = str(exc).splitlines()[0] if str(exc) else ""
        result["error"] = f"{type(exc).__name__}: {text[:300]}"
    return result


def _descendants(pid: int) -> list:
    """The processes below ``pid`` (Linux ``/proc``; empty elsewhere)."""
    children = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                parent = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _stop_descendants() -> None:
    """Kill every process the notebook started that is still running.  The worker is their
    subreaper (:mod:`calnotes.book._sandbox`), so a process that detached itself is among them;
    in a PID namespace the kernel would end them anyway when this process exits."""
    import signal
    for pid in _descendants(os.getpid()):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def main(config: dict, achieved: list) -> None:
    """Run, write the JSON result to ``config["result_fd"]``, and exit."""
    import signal
    signal.signal(signal.SIGTERM, lambda *_: (_stop_descendants(), os._exit(143)))
    result = run(config)
    _stop_descendants()
    result["contained"] = achieved
    data = json.dumps(result).encode()
    fd = int(config["result_fd"])
    while data:
        data = data[os.write(fd, data):]
    os.close(fd)
    os._exit(0)
