# Replayground tracer: runs one Python program under sys.settrace and reports, as JSON
# lines, every event of the user's file (`main.py`).
#
# Started as `python3 -s -c <this file>` inside the sandbox. Input: one JSON request on
# stdin, read to EOF:
#   {"code": str, "stdin": str, "max_events": int, "max_output_bytes": int,
#    "repr_chars": int, "max_depth": int, "max_items": int, "recursion_limit": int,
#    "cpu_seconds": number (optional, for messages), "memory_bytes": int (optional, for messages),
#    "key": str (optional: the run's key, repeated on the final line)}
#
# Output: JSON lines on a private duplicate of the original fd 1 (fds 0, 1 and 2 then point
# at /dev/null, so nothing the program does with raw fds can corrupt the stream). Every
# line starts with `{"t":"<tag>",` so a reader can dispatch on its first bytes:
#   {"t":"f","id":N,"function":str,"parent":N|null,"depth":N,"is_generator":bool,"called_from_library":bool}
#       a new frame (ids count up from 0, parents come first)
#   {"t":"v","id":N,"repr":str,"type":str,"object_id":N[,"shape":Shape]}
#       a new interned value (ids count up from 0; children come first). Shape is the
#       JSON of replayground_shared::trace::Shape: {"kind":"list"|"tuple"|"set","items":[id..],
#       "truncated":b} | {"kind":"dict","entries":[[k,v]..],"truncated":b} |
#       {"kind":"object","attrs":[{"name":s,"value":id}..],"truncated":b} | {"kind":"elided"}
#   {"t":"o","fd":1|2,"s":str}
#       program output (stdout or stderr), in write order, always before the event it precedes
#   {"t":"e","k":"call"|"line"|"return"|"exception","f":frame,"l":line,"o":stdout_len,
#    "e":stderr_len[,"v":[[name,value]..]][,"r":value][,"i":true][,"g":true]}
#       an event. "v" (locals) is left out when it equals the previous event of the same
#       frame; "r" is the returned value or the exception instance; "i" = internal
#       StopIteration; "g" = StopIteration/GeneratorExit.
#   {"t":"x","k":key,"n":[frames,values,events],"outcome":Outcome}
#       the last line: the request's key, how many frame, value and event lines the tracer
#       wrote, and replayground_shared::trace::Outcome as JSON.
# A stream without the "x" line was cut short (killed by the sandbox); every prefix of
# the stream is self-consistent because definitions always precede their uses.
#
# What the program can still do. The tracer and the program share one process, so nothing
# the tracer holds is out of the program's reach: it can write to any of its fds (the
# stream included) with os.write or ctypes, and it can find the tracer's functions and
# the key through the interpreter (frames below its own, sys.gettrace(), gc). Moving the
# fd or hiding names would only rename the door. What holds instead: (1) a line written
# into the stream without that digging breaks the final line's key or counts, and the
# server reports the run as crashed; (2) whatever the stream says, the server enforces
# every limit itself (events, bytes, output, name length) and refuses lines that break
# the protocol's invariants; (3) a forged trace can only misdescribe this run of this
# program to the person who submitted it. Limits the sandbox applies (CPU, memory, wall
# clock, processes, files) do not depend on the tracer at all.
#
# This is a hot path (benchmarked): per-code and per-type facts are computed once and
# cached, immutable scalars are interned by identity, and an event line is built with
# one f-string.


def _replayground_tracer():
    import io
    import os
    import sys
    import types

    # The C halves of `json` and `signal`: importing the Python halves (re, enum) would
    # double the tracer's start-up time.
    import _json
    import _signal as signal

    jstr = _json.encode_basestring  # str -> JSON string literal

    class JsonContext:
        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = float

    def to_json(value):
        if value is None:
            return "null"
        if value is True or value is False:
            return "true" if value else "false"
        if isinstance(value, str):
            return jstr(value)
        if isinstance(value, (int, float)):
            return repr(value)
        if isinstance(value, dict):
            return "{" + ",".join(jstr(str(k)) + ":" + to_json(v) for k, v in value.items()) + "}"
        return "[" + ",".join(to_json(v) for v in value) + "]"

    # The protocol stream: a private copy of fd 1, then fds 0-2 go to /dev/null.
    proto_fd = os.dup(1)
    try:
        text = sys.stdin.buffer.read().decode("utf-8", "replace")
        request, _ = _json.make_scanner(JsonContext())(text, 0)
        if not isinstance(request, dict):
            raise ValueError("not an object")
    except Exception as e:  # noqa: BLE001 - any bad request is reported, not raised
        request = {"code": "", "_error": f"the tracer could not read its request: {e!r}"}
    del text
    key = str(request.pop("key", ""))
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    proto = open(proto_fd, "w", encoding="utf-8", errors="replace", newline="\n", buffering=1 << 16)
    write = proto.write

    src = request.get("code", "")
    max_events = int(request.get("max_events", 100_000))
    event_limit = max_events
    max_output = int(request.get("max_output_bytes", 1 << 20))
    repr_chars = max(int(request.get("repr_chars", 1000)), 1)
    max_depth = int(request.get("max_depth", 3))
    max_items = int(request.get("max_items", 50))
    recursion_limit = int(request.get("recursion_limit", 1000))
    cpu_seconds = request.get("cpu_seconds")
    memory_bytes = request.get("memory_bytes")
    # Expanding every container to max_depth could cost max_items ** max_depth nodes per
    # local per event; past this many nodes per value, containers are left `elided`.
    node_budget = max(max_items, 1) * 4

    n_events = 0
    n_written = 0  # event lines written
    cpu_hit = False
    out_n = 0  # bytes written to stdout
    err_n = 0  # bytes written to stderr
    pending = []  # (fd, text) not yet on the stream

    def flush_output():
        # Consecutive writes to the same fd become one line.
        run_fd = None
        run = []
        for fd, text in pending:
            if fd != run_fd and run:
                write('{"t":"o","fd":%d,"s":%s}\n' % (run_fd, jstr("".join(run))))
                run = []
            run_fd = fd
            run.append(text)
        if run:
            write('{"t":"o","fd":%d,"s":%s}\n' % (run_fd, jstr("".join(run))))
        pending.clear()

    in_child = False

    def after_fork_in_child():
        # A forked child keeps running the program, but only the parent reports: the
        # child's copy of the stream (and of its unflushed buffer) is dropped unwritten.
        nonlocal write, in_child
        in_child = True
        write = discard
        try:
            os.close(proto_fd)
        except OSError:
            pass

    def discard(text):
        return len(text)

    os.register_at_fork(after_in_child=after_fork_in_child)

    def flusher():
        # Events wait in the buffer; a program that then blocks (sleep, a lock) until the
        # sandbox's wall-clock kill must not lose them.
        while True:
            time.sleep(0.25)
            try:
                proto.flush()
            except Exception:  # noqa: BLE001 - a closed stream (the run is ending) is fine
                return

    import _thread
    import time

    _thread.start_new_thread(flusher, ())

    def finish(outcome):
        sys.settrace(None)
        if in_child:
            os._exit(0)
        try:
            flush_output()
            write('{"t":"x","k":%s,"n":[%d,%d,%d],"outcome":%s}\n'
                  % (jstr(key), n_frames, len(values), n_written, to_json(outcome)))
            proto.flush()
        finally:
            # No atexit handlers, no finally blocks, no waiting on the program's threads.
            os._exit(0)

    def limit(kind, detail):
        finish({"kind": "limit_reached", "limit": kind, "detail": detail})

    def cpu_detail():
        if cpu_seconds is not None:
            return f"the program used more than {cpu_seconds:g} s of CPU time"
        return "the program used up its CPU time"

    def memory_detail():
        if memory_bytes is not None:
            return f"the program ran out of memory (limit {int(memory_bytes) // (1 << 20)} MiB)"
        return "the program ran out of memory"

    def recursion_detail():
        return f"the program nested calls more than {recursion_limit} deep"

    def over_event_limit():
        if cpu_hit:
            limit("cpu_time", cpu_detail())
        limit("events", f"the program ran more than {max_events} steps")

    def tracer_failed(e):
        # The trace function itself failed: at the recursion limit or out of memory this is
        # the program's doing; anything else is a tracer bug, reported as a crash.
        if isinstance(e, RecursionError):
            sys.setrecursionlimit(sys.getrecursionlimit() + 1000)
            limit("recursion_depth", recursion_detail())
        if isinstance(e, MemoryError):
            limit("memory", memory_detail())
        finish({"kind": "crashed", "message": f"the tracer failed: {type(e).__name__}: {e}"})

    # --- program output -----------------------------------------------------------------

    def add_output(fd, text):
        nonlocal out_n, err_n
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            data = text.encode("utf-8", "replace")
            text = data.decode("utf-8")
        n = len(data)
        if out_n + err_n + n > max_output:
            room = max(max_output - out_n - err_n, 0)
            text = data[:room].decode("utf-8", "ignore")
            pending.append((fd, text))
            if fd == 1:
                out_n += len(text.encode("utf-8"))
            else:
                err_n += len(text.encode("utf-8"))
            limit("output", f"the program wrote more than {max_output} bytes of output")
        pending.append((fd, text))
        if fd == 1:
            out_n += n
        else:
            err_n += n

    def add_output_quietly(fd, text):
        # The tracer's own text (a traceback) is cut to the room left instead of ending the run.
        room = max(max_output - out_n - err_n, 0)
        data = text.encode("utf-8", "replace")
        if len(data) > room:
            text = data[:room].decode("utf-8", "ignore")
        else:
            text = data.decode("utf-8")
        if text:
            add_output(fd, text)

    class BinaryCapture:
        def __init__(self, text):
            self._text = text

        def write(self, b):
            self._text.write(bytes(b).decode("utf-8", "replace"))
            return len(b)

        def flush(self):
            pass

        def writable(self):
            return True

    class Capture(io.TextIOBase):
        def __init__(self, fd):
            super().__init__()
            self._fd = fd
            self.buffer = BinaryCapture(self)

        @property
        def encoding(self):
            return "utf-8"

        @property
        def errors(self):
            return "strict"

        def write(self, s):
            if type(s) is not str:
                if not isinstance(s, str):
                    raise TypeError(f"write() argument must be str, not {type(s).__name__}")
                s = str(s)
            if s:
                add_output(self._fd, s)
            return len(s)

        def writable(self):
            return True

        def isatty(self):
            return False

        def flush(self):
            pass

    # --- values ---------------------------------------------------------------------------

    values = {}  # (repr, type name, object id, shape key) -> value id
    scalar_cache = {}  # id(obj) -> (obj, value id): holding obj keeps its id from being reused
    type_kinds = {}  # type -> shape kind ("list", "tuple", "set", "dict", "object") or None
    json_names = {}  # name -> its JSON string, or "" for a name that is not shown

    def json_name(name):
        if type(name) is not str or name.startswith("__"):
            return ""
        # Python allows names of any length: they are cut like reprs.
        return jstr(cut(name))
    # Immutable objects whose serialised value is a function of the object alone.
    cacheable = {
        int, float, complex, bool, str, bytes, type(None), type, types.FunctionType,
        types.BuiltinFunctionType, types.ModuleType, type(Ellipsis), type(NotImplemented),
    }
    long_repr_types = {list, tuple, set, frozenset, dict}
    no_expand = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
                 types.CodeType, types.FrameType, types.TracebackType, types.GeneratorType, types.CoroutineType,
                 types.AsyncGeneratorType, types.MethodWrapperType, types.WrapperDescriptorType,
                 types.MappingProxyType, types.CellType, BaseException)
    in_long_repr = set()

    def cut(r):
        if len(r) > repr_chars:
            return r[: max(repr_chars - 3, 0)] + "..."
        return r

    def long_repr(o, t):
        # Builds only the prefix of repr(o) that survives the cut, so a 1M-element list costs
        # as little as a short one. Every piece is an exact prefix of the real repr.
        oid = id(o)
        if oid in in_long_repr:
            return "{...}" if t is dict else "[...]"
        in_long_repr.add(oid)
        try:
            if t is list:
                parts, close = ["["], "]"
            elif t is tuple:
                parts, close = ["("], ")"
            elif t is set or t is dict:
                parts, close = ["{"], "}"
            else:
                parts, close = ["frozenset({"], "})"
            size = len(parts[0])
            first = True
            items = o.items() if t is dict else o
            for item in items:
                if not first:
                    parts.append(", ")
                    size += 2
                first = False
                if t is dict:
                    piece = safe_repr(item[0], type(item[0])) + ": " + safe_repr(item[1], type(item[1]))
                else:
                    piece = safe_repr(item, type(item))
                parts.append(piece)
                size += len(piece)
                if size > repr_chars:
                    return "".join(parts)
            parts.append(close)
            return "".join(parts)
        finally:
            in_long_repr.discard(oid)

    def safe_repr(o, t):
        try:
            if t is str and len(o) > repr_chars:
                r = repr(o[: repr_chars + 1])
            elif t in long_repr_types and len(o) > 64:
                r = long_repr(o, t)
            else:
                r = repr(o)
                if type(r) is not str:
                    r = str(r)
        except BaseException as e:  # noqa: BLE001 - a repr that raises (even SystemExit) must not end the trace
            r = f"<repr failed: {type(e).__name__}>"
        return cut(r) if len(r) > repr_chars else r

    def type_kind(t):
        kind = type_kinds.get(t, 0)
        if kind != 0:
            return kind
        if issubclass(t, dict):
            kind = "dict"
        elif issubclass(t, list):
            kind = "list"
        elif issubclass(t, tuple):
            kind = "tuple"
        elif issubclass(t, (set, frozenset)):
            kind = "set"
        elif t in cacheable or issubclass(t, no_expand) or issubclass(t, (int, float, complex, str, bytes)):
            kind = None
        elif getattr(t, "__dictoffset__", 0) or any("__slots__" in vars(c) for c in t.__mro__[:-1]):
            kind = "object"
        else:
            kind = None
        type_kinds[t] = kind
        return kind

    def emit_value(key, shape_json):
        # Counted only once written: a RecursionError mid-write must not skew the final
        # line's counts.
        vid = len(values)
        r, tn, oid, _ = key
        if shape_json is None:
            write('{"t":"v","id":%d,"repr":%s,"type":%s,"object_id":%d}\n'
                  % (vid, jstr(r), jstr(tn), oid))
        else:
            write('{"t":"v","id":%d,"repr":%s,"type":%s,"object_id":%d,"shape":%s}\n'
                  % (vid, jstr(r), jstr(tn), oid, shape_json))
        values[key] = vid
        return vid

    def scalar_id(o, t):
        key = (safe_repr(o, t), t.__name__, id(o), None)
        vid = values.get(key)
        if vid is None:
            vid = emit_value(key, None)
        if len(scalar_cache) > 200_000:
            scalar_cache.clear()
        scalar_cache[id(o)] = (o, vid)
        return vid

    budget = 0
    # Builtin containers of scalars, by id: (container, identities of its contents, value id).
    # Their value is a function of those identities, so an unchanged one costs one
    # map(id, ...) per event instead of a repr and a walk.
    flat_cache = {}
    flat_types = {list, tuple, dict, set, frozenset}

    def identities(o, t):
        if t is dict:
            return (tuple(map(id, o)), tuple(map(id, o.values())))
        return tuple(map(id, o))

    def value_id(o):
        # The id of a top-level value (a local, a return value, an exception).
        nonlocal budget
        t = type(o)
        if t in cacheable:
            hit = scalar_cache.get(id(o))
            if hit is not None:
                return hit[1]
            return scalar_id(o, t)
        flat = t in flat_types and len(o) <= 256
        if flat:
            hit = flat_cache.get(id(o))
            if hit is not None and hit[0] is o and hit[1] == identities(o, t):
                return hit[2]
        budget = node_budget
        vid = compound_id(o, t, 0, ())
        if flat:
            contents = o.values() if t is dict else o
            if all(type(c) in cacheable for c in contents) and (
                    t is not dict or all(type(k) in cacheable for k in o)):
                if len(flat_cache) > 20_000:
                    flat_cache.clear()
                flat_cache[id(o)] = (o, identities(o, t), vid)
        return vid

    def child_id(o, depth, path):
        t = type(o)
        if t in cacheable:
            hit = scalar_cache.get(id(o))
            if hit is not None:
                return hit[1]
            return scalar_id(o, t)
        return compound_id(o, t, depth, path)

    def attributes(o, t):
        out = []
        try:
            d = object.__getattribute__(o, "__dict__")
        except BaseException:  # noqa: BLE001 - no __dict__, or a hostile one
            d = None
        if isinstance(d, dict):
            out.extend((k, v) for k, v in list(d.items()) if type(k) is str and not k.startswith("__"))
        for c in t.__mro__[:-1]:
            slots = vars(c).get("__slots__")
            if slots is None:
                continue
            for name in (slots,) if isinstance(slots, str) else slots:
                if name in ("__dict__", "__weakref__") or name.startswith("__"):
                    continue
                try:
                    out.append((name, object.__getattribute__(o, name)))
                except BaseException:  # noqa: BLE001 - an unset slot has no value to show
                    pass
        return out

    def compound_id(o, t, depth, path):
        nonlocal budget
        r = safe_repr(o, t)
        oid = id(o)
        kind = type_kind(t)
        shape_key = None
        shape_json = None
        if kind is not None:
            if depth >= max_depth or oid in path or budget <= 0:
                shape_key = ("elided",)
                shape_json = '{"kind":"elided"}'
            else:
                budget -= 1
                inner = path + (oid,)
                d1 = depth + 1
                truncated = False
                if kind == "dict":
                    entries = []
                    try:
                        for k, v in list(o.items())[: max_items + 1]:
                            if len(entries) == max_items:
                                truncated = True
                                break
                            entries.append((child_id(k, d1, inner), child_id(v, d1, inner)))
                    except Exception:  # noqa: BLE001 - a dict subclass with a broken items()
                        truncated = True
                    entries = tuple(entries)
                    shape_key = (kind, entries, truncated)
                    shape_json = '{"kind":"dict","entries":[%s],"truncated":%s}' % (
                        ",".join(["[%d,%d]" % kv for kv in entries]), "true" if truncated else "false")
                elif kind == "object":
                    attrs = attributes(o, t)
                    if len(attrs) > max_items:
                        attrs = attrs[:max_items]
                        truncated = True
                    pairs = tuple((name, child_id(v, d1, inner)) for name, v in attrs)
                    shape_key = (kind, pairs, truncated)
                    shape_json = '{"kind":"object","attrs":[%s],"truncated":%s}' % (
                        ",".join(['{"name":%s,"value":%d}' % (jstr(n), v) for n, v in pairs]),
                        "true" if truncated else "false")
                else:
                    items = []
                    try:
                        for item in o:
                            if len(items) == max_items:
                                truncated = True
                                break
                            items.append(child_id(item, d1, inner))
                    except Exception:  # noqa: BLE001 - a container subclass with a broken __iter__
                        truncated = True
                    items = tuple(items)
                    shape_key = (kind, items, truncated)
                    shape_json = '{"kind":"%s","items":[%s],"truncated":%s}' % (
                        kind, ",".join(map(str, items)), "true" if truncated else "false")
        key = (r, t.__name__, oid, shape_key)
        vid = values.get(key)
        if vid is None:
            vid = emit_value(key, shape_json)
        return vid

    # --- frames and events ----------------------------------------------------------------

    generator_flags = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR
    import opcode

    yield_value = opcode.opmap["YIELD_VALUE"]
    user_file = "main.py"
    code_info = {}  # code object -> (name, is_generator, co_code, first line) or False (library code)
    frame_records = {}  # live frame object -> (local trace function, frame id, depth)
    n_frames = 0
    top_code = None

    def info_of(code):
        if code.co_filename != user_file:
            info = False
        else:
            info = (code.co_name, bool(code.co_flags & generator_flags), code.co_code, code.co_firstlineno or 1)
        code_info[code] = info
        return info

    def new_frame(frame, info):
        nonlocal n_frames
        name, is_gen, co_code, first_line = info
        back = frame.f_back
        b = back
        while b is not None and b not in frame_records:
            b = b.f_back
        is_module = frame.f_code is top_code
        if b is None:
            parent, depth = None, (0 if is_module else 1)
        else:
            _, parent, parent_depth = frame_records[b]
            depth = parent_depth + 1
        from_library = not is_module and back is not None and back not in frame_records
        fid = n_frames
        write('{"t":"f","id":%d,"function":%s,"parent":%s,"depth":%d,"is_generator":%s,"called_from_library":%s}\n'
              % (fid, jstr(name), "null" if parent is None else parent, depth,
                 "true" if is_gen else "false", "true" if from_library else "false"))
        n_frames += 1

        last = None  # locals of this frame's previous event
        exc_pending = False  # an exception event not yet followed by a line event

        def local(frame, event, arg):
            nonlocal n_events, n_written, last, exc_pending
            try:
                n_events += 1
                if n_events > event_limit:
                    over_event_limit()
                items = list(frame.f_locals.items())
                cur = []  # (name as JSON, value id)
                for name, o in items:
                    jn = json_names.get(name)
                    if jn is None:
                        jn = json_names[name] = json_name(name)
                    if not jn:
                        continue
                    t = type(o)
                    if t in cacheable:
                        hit = scalar_cache.get(id(o))
                        cur.append((jn, hit[1] if hit is not None else scalar_id(o, t)))
                    else:
                        cur.append((jn, value_id(o)))
                extra = ""
                if event == "line":
                    exc_pending = False
                elif event == "return":
                    extra = ',"r":%d' % value_id(arg)
                    # A generator's return event is a yield when it stops at YIELD_VALUE, unless
                    # an exception (close(), throw()) is leaving the frame from there.
                    if not (is_gen and not exc_pending and co_code[frame.f_lasti] == yield_value):
                        frame_records.pop(frame, None)
                    exc_pending = False
                elif event == "exception":
                    exc_type, exc, tb = arg
                    extra = ',"r":%d' % value_id(exc)
                    if is_gen and exc_type is StopIteration and tb is None:
                        extra += ',"i":true'
                    else:
                        exc_pending = True
                    if exc_type is StopIteration or exc_type is GeneratorExit:
                        extra += ',"g":true'
                if pending:
                    flush_output()
                if cur != last:
                    last = cur
                    extra += ',"v":[' + ",".join(["[%s,%d]" % pair for pair in cur]) + "]"
                write(f'{{"t":"e","k":"{event}","f":{fid},"l":{frame.f_lineno or first_line},'
                      f'"o":{out_n},"e":{err_n}{extra}}}\n')
                n_written += 1
            except BaseException as e:  # noqa: BLE001 - see tracer_failed
                tracer_failed(e)
            return local

        frame_records[frame] = (local, fid, depth)
        return local

    def global_trace(frame, event, arg):
        # Called for the 'call' event of every Python frame: library frames get no local
        # trace function, so they run untraced (callbacks into main.py are seen here again).
        code = frame.f_code
        info = code_info.get(code)
        if info is None:
            info = info_of(code)
        if info is False:
            return None
        try:
            record = frame_records.get(frame)
            local = record[0] if record is not None else new_frame(frame, info)
        except BaseException as e:  # noqa: BLE001 - see tracer_failed
            tracer_failed(e)
        return local(frame, event, arg)

    # --- limits ---------------------------------------------------------------------------

    def on_cpu_limit(signum, frame):
        # The soft RLIMIT_CPU was reached: the next event ends the trace. If no event comes
        # (the program is in untraced library code), the alarm ends it from wherever it is;
        # a C loop that never returns to Python is killed by the hard limit a second later.
        nonlocal cpu_hit, event_limit
        cpu_hit = True
        event_limit = -1
        signal.setitimer(signal.ITIMER_REAL, 0.25)

    def on_alarm(signum, frame):
        if cpu_hit:
            limit("cpu_time", cpu_detail())

    signal.signal(signal.SIGXCPU, on_cpu_limit)
    signal.signal(signal.SIGALRM, on_alarm)

    # --- the run --------------------------------------------------------------------------

    if "_error" in request:
        finish({"kind": "crashed", "message": request["_error"]})

    stdout = Capture(1)
    stderr = Capture(2)
    sys.stdout = sys.__stdout__ = stdout
    sys.stderr = sys.__stderr__ = stderr
    sys.stdin = sys.__stdin__ = io.StringIO(request.get("stdin") or "")
    sys.argv = [user_file]

    import linecache

    try:
        top_code = compile(src, user_file, "exec", dont_inherit=True)
    except SyntaxError as e:
        import traceback

        add_output_quietly(2, "".join(traceback.format_exception_only(type(e), e)))
        finish({"kind": "syntax_error", "message": str(e.msg), "line": e.lineno, "column": e.offset})
    except ValueError as e:  # source code string cannot contain null bytes
        add_output_quietly(2, f"SyntaxError: {e}\n")
        finish({"kind": "syntax_error", "message": str(e), "line": None, "column": None})
    linecache.cache[user_file] = (len(src), None, src.splitlines(True), user_file)

    module = types.ModuleType("__main__")
    module.__file__ = user_file
    module.__builtins__ = __builtins__
    tracer_module = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    namespace = module.__dict__

    # The tracer's own frames sit below the program's; they do not count towards its limit.
    sys.setrecursionlimit(recursion_limit + 3)
    sys.settrace(global_trace)
    try:
        exec(top_code, namespace)
    except BaseException as e:  # noqa: BLE001 - every way a program can end is reported
        sys.settrace(None)
        sys.setrecursionlimit(max(recursion_limit, 1000) + 1000)
        if isinstance(e, SystemExit):
            code = e.code
            if code is None:
                status = 0
            elif isinstance(code, int):
                status = max(min(int(code), 2**31 - 1), -(2**31))
            else:
                add_output_quietly(2, f"{code}\n")
                status = 1
            finish({"kind": "exited", "code": status})
        import traceback

        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != user_file:
            tb = tb.tb_next
        line = None
        t = tb
        while t is not None:
            if t.tb_frame.f_code.co_filename == user_file:
                line = t.tb_lineno
            t = t.tb_next
        try:
            text = "".join(traceback.format_exception(type(e), e, tb))
        except BaseException as fe:  # noqa: BLE001 - a hostile __str__ must not lose the outcome
            text = f"Traceback unavailable: {type(fe).__name__}\n"
        add_output_quietly(2, text)
        if isinstance(e, RecursionError):
            limit("recursion_depth", recursion_detail())
        if isinstance(e, MemoryError):
            limit("memory", memory_detail())
        try:
            message = str(e)
        except BaseException as me:  # noqa: BLE001
            message = f"<str failed: {type(me).__name__}>"
        finish({"kind": "uncaught_exception", "exception_type": type(e).__name__, "message": message, "line": line})
    del tracer_module
    finish({"kind": "finished"})


_replayground_tracer()
