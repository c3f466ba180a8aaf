"""The test oracle for Replayground's debugger actions: CPython's own bdb.

Usage: python3 pdb_oracle.py PROGRAM.py < scripts.json

stdin holds a JSON list of action scripts (each a list of action names such as
"step_into", "step_over", "step_return", "continue", "breakpoint:12"). For each
script the program is run afresh under a bdb.Bdb that behaves like pdb restricted to
the program's own file, and one JSON line per script is written: the list of stops
in the exact form of `replayground debug` (initial stop first, then one per action,
then {"event": "end"} if the program finished before the actions ran out).
"""

import bdb
import builtins
import io
import json
import linecache
import sys

USER_FILE = "main.py"
REPR_CHARS = 200


def cut(text):
    return text if len(text) <= REPR_CHARS else text[: REPR_CHARS - 3] + "..."


def safe_repr(value):
    try:
        return cut(repr(value))
    except Exception as exc:  # a user __repr__ may raise
        return cut(f"<repr failed: {type(exc).__name__}>")


def visible(mapping):
    return {k: safe_repr(v) for k, v in mapping.items() if not k.startswith("__")}


class Oracle(bdb.Bdb):
    """pdb's stop rules (pdb.Pdb.user_*), restricted to the user's file."""

    def __init__(self, actions):
        super().__init__()
        self.actions = list(actions)
        self.consumed = 0
        self.stops = []

    def canonic(self, filename):
        return filename

    def stop_here(self, frame):
        if frame.f_code.co_filename != USER_FILE:
            return False
        return super().stop_here(frame)

    def user_call(self, frame, argument_list):
        if self.stop_here(frame):
            self.interact(frame, "call", None)

    def user_line(self, frame):
        self.interact(frame, "line", None)

    def user_return(self, frame, return_value):
        self.interact(frame, "return", safe_repr(return_value))

    def user_exception(self, frame, exc_info):
        self.interact(frame, "exception", safe_repr(exc_info[1]))

    def interact(self, frame, event, value):
        depth = -1
        f = frame
        while f is not None:
            if f.f_code.co_filename == USER_FILE:
                depth += 1
            f = f.f_back
        stop = {"event": event, "line": frame.f_lineno, "function": frame.f_code.co_name, "depth": depth}
        if depth == 0:
            stop["locals"] = {}
            stop["globals"] = visible(frame.f_globals)
        else:
            stop["locals"] = visible(frame.f_locals)
        if value is not None:
            stop["value"] = value
        self.stops.append(stop)
        if not self.actions:
            self.set_quit()
            return
        action = self.actions.pop(0)
        self.consumed += 1
        if action == "step_into":
            self.set_step()
        elif action == "step_over":
            self.set_next(frame)
        elif action == "step_return":
            self.set_return(frame)
        elif action == "continue":
            self.set_continue()
        elif action.startswith("breakpoint:"):
            error = self.set_break(USER_FILE, int(action.split(":", 1)[1]))
            if error:
                raise SystemExit(f"oracle: {error}")
            self.set_continue()
        else:
            raise SystemExit(f"oracle: unknown action {action}")


def run_script(code, source, actions):
    # bdb keeps breakpoints on the class; each script starts with none.
    bdb.Breakpoint.clearBreakpoints()
    oracle = Oracle(actions)
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    saved = sys.stdout, sys.stderr, sys.stdin
    sys.stdout, sys.stderr, sys.stdin = io.StringIO(), io.StringIO(), io.StringIO("")
    finished = False
    try:
        oracle.run(code, namespace)
        finished = True
    except bdb.BdbQuit:
        pass
    except BaseException:  # the program's own uncaught exception or sys.exit
        finished = True
    finally:
        sys.settrace(None)
        sys.stdout, sys.stderr, sys.stdin = saved
    stops = oracle.stops
    # Every stop after the first answers one action; an action with no stop after
    # it ran the program to its end.
    if finished and len(stops) <= oracle.consumed:
        stops.append({"event": "end"})
    return stops


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        source = f.read()
    linecache.cache[USER_FILE] = (len(source), None, source.splitlines(True), USER_FILE)
    code = compile(source, USER_FILE, "exec")
    scripts = json.load(sys.stdin)
    out = sys.stdout
    for actions in scripts:
        out.write(json.dumps(run_script(code, source, actions)) + "\n")


if __name__ == "__main__":
    main()
