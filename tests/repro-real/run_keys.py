#!/usr/bin/env python3
"""Runs the dataset author's reproduction of every case (the answer key, never part of the
suite) with one Python, and says whether each crash raises the exception type the case's
truth names: which truths the frameworks of that Python can meet at all.

    python3 tests/repro-real/run_keys.py DATASET_CLONE PYTHON [--json OUT]

DATASET_CLONE: a clone of mehilshah/Bug_Reproducibility_DL_Bugs (the commit in truth.json).
PYTHON: e.g. .tools/dl/bin/python. Each key runs in an empty temporary folder with a
240 s limit and no GPU; `Bugs/NNN/main.py`, or the original snippet where the case has none.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SUITE = Path(__file__).resolve().parent
EXCEPTION_LINE = re.compile(r"^([\w.]+(?:Error|Exception|Exit|Interrupt))\b")


def last_exception(stderr: str):
    lines = [l for l in stderr.strip().splitlines() if EXCEPTION_LINE.match(l)]
    return EXCEPTION_LINE.match(lines[-1]).group(1).split(".")[-1] if lines else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("python")
    parser.add_argument("--json", type=Path, help="write every case's result here")
    args = parser.parse_args()
    # Absolute (the keys run elsewhere), but not resolved: a virtual environment's python
    # is a link that finds its packages by where it is called from.
    python = os.path.abspath(args.python)
    results = {}
    for case_dir in sorted(p for p in SUITE.iterdir() if (p / "case.json").is_file()):
        case = json.loads((case_dir / "case.json").read_text())
        source = json.loads((case_dir / "truth.json").read_text())["path"]
        key = args.dataset / source / "main.py"
        if not key.is_file():
            key = args.dataset / source / "original_code_snippet.py"
        if not key.is_file():
            sys.exit(f"{key} is missing: DATASET_CLONE must be a checkout of the dataset")
        with tempfile.TemporaryDirectory() as folder:
            env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "2"}
            try:
                run = subprocess.run(
                    [python, str(key)], cwd=folder, capture_output=True, text=True, timeout=240, env=env
                )
                code, raised, tail = run.returncode, last_exception(run.stderr), run.stdout[-300:]
            except subprocess.TimeoutExpired:
                code, raised, tail = "timeout", None, ""
        wanted = case.get("error_type")
        crash = case["symptom"] == "crash"
        result = {
            "symptom": case["symptom"],
            "reported": wanted,
            "exit": code,
            "raised": raised,
            "meets_truth": (raised == wanted) if crash else None,
            "stdout_tail": tail,
        }
        results[case_dir.name] = result
        print(f"{case_dir.name:40} {case['symptom']:24} {wanted or '-':22} exit {code!s:8} raised {raised or '-'}", flush=True)
    crashes = {k: v for k, v in results.items() if v["symptom"] == "crash"}
    met = [k for k, v in crashes.items() if v["meets_truth"]]
    print(f"crash reproductions raising the reported type: {len(met)} of {len(crashes)}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
