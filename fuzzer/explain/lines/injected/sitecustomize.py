"""buildfuzz's line tracer: loaded as `sitecustomize` by a replayed Python step whose
PYTHONPATH buildfuzz put this directory first on (fuzzer/explain/lines/replays.py); never
imported by buildfuzz itself. It edits no user file and changes no value the program sees.

With BUILDFUZZ_LINES_OUT set (and removed from the environment at once, so the program's
children are not traced), it records for code that is not the interpreter's standard
library (site-packages included: a generator's own package counts) a stream of events:

- ["L", file, line, function]: a line event;
- ["I", file, line, function, value, source, index]: at a `for` statement, the value the
  loop took (its target's names read from the frame), what it iterated when the tracer can
  see it without running user code (a name or attribute chain, through enumerate/reversed/
  list/tuple/sorted/iter), and which element it was (1-based);
- ["S", file, line, function, value, source]: a call from traced code to a source of
  nondeterminism (directory listings, uuid, random, the clock, tempfile names, id/hash),
  its source shaped as an "I" event's, naming the call.

Values are reprs with addresses normalised: an object with the default repr is named by
its class and creation ordinal (`Label#3`: the 3rd `Label` whose `__init__` ran), else by
the order its address first appeared, so runs compare by value, not by address. The
stream is capped (BUILDFUZZ_LINES_MAX_EVENTS) and timed (BUILDFUZZ_LINES_BUDGET_S): past
either it stops tracing and says why. sys.monitoring on 3.12+, sys.settrace before.
Only the main thread is traced. A comprehension's values are recorded as a loop's: in its
own frame (before 3.12; generator expressions always), or inlined in its function's (3.12).
Then the user's own sitecustomize, which this one shadows, is run.
"""
import ast
import atexit
import builtins
import dis
import inspect
import itertools
import json
import os
import sys
import sysconfig
import time

# beside it, on the path that found it (PYTHONPATH); _chain takes that entry off again
from buildfuzz_lines_sources import wrap_sources  # noqa: E402
from buildfuzz_lines_values import (UNORDERED_CONTAINERS, Values, _basis, _element_types, _hashed_by, _keys,  # noqa: E402
                                    _type_name, iterator_contents)

HERE = os.path.dirname(os.path.abspath(__file__))
UNWRAPPED = (enumerate, reversed, list, tuple, sorted, iter)
HASHING = ("__hash__", "__eq__")  # id() and hash() there make a set work: not data
COMPREHENSIONS = ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>")
COMPREHENSIONS_AST = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)



def _stdlib():
    paths = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib")}
    return tuple(os.path.realpath(p) + os.sep for p in paths if p)


class Loop:
    __slots__ = ("names", "iterable", "text", "first", "last")

    def __init__(self, target, iterable, source, first, last):
        self.names = tuple(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        self.iterable = iterable
        self.text = ast.get_source_segment(source, iterable) or ""
        self.first, self.last = first, last


class Tracer:
    def __init__(self, out, max_events, budget_s):
        self.out, self.max_events = out, max_events
        self.started = time.monotonic()
        self.deadline = self.started + budget_s
        self.events, self.files, self.stopped = [], {}, ""
        self.stdlib = _stdlib()
        self.traced_files, self.loops, self.codes = {}, {}, {}
        self.pending, self.counts, self.last_line, self.iterated = {}, {}, {}, {}
        self.values = Values()
        self.provenance, self.source_at = {}, {}

    # which code is traced
    def traced(self, filename):
        known = self.traced_files.get(filename)
        if known is None:
            real = os.path.realpath(filename)
            inside = real.startswith(self.stdlib) and "-packages" + os.sep not in real
            known = not (filename.startswith("<") or inside or real.startswith(HERE + os.sep))
            self.traced_files[filename] = known
        return known

    def file(self, filename):
        index = self.files.get(filename)
        if index is None:
            index = self.files[filename] = len(self.files)
        return index

    def loops_of(self, filename):
        found = self.loops.get(filename)
        if found is None:
            found = {}
            try:
                with open(filename, "rb") as f:
                    source = f.read().decode("utf-8", "replace")
                for node in ast.walk(ast.parse(source)):
                    if isinstance(node, (ast.For, ast.AsyncFor)):
                        found[node.lineno] = Loop(node.target, node.iter, source, node.lineno,
                                                  node.body[-1].end_lineno)
                    elif isinstance(node, COMPREHENSIONS_AST):  # keyed apart: a loop may share its line
                        first = node.generators[0]
                        found.setdefault(("comprehension", node.lineno),
                                         Loop(first.target, first.iter, source, node.lineno, node.lineno))
            except (OSError, SyntaxError, ValueError):
                pass
            self.loops[filename] = found
        return found

    def add(self, event):
        if self.stopped:
            return
        self.events.append(event)
        if len(self.events) >= self.max_events:
            self.stop("reached its cap of %d events" % self.max_events)
        elif not len(self.events) & 1023 and time.monotonic() > self.deadline:
            self.stop("reached its time budget")

    def stop(self, why):
        self.stopped = why
        self.disable()

    # events
    def start_of(self, frame):
        code = frame.f_code
        if code.co_name == "__init__" and code.co_argcount:
            self.values.initialised(frame.f_locals.get(code.co_varnames[0]))

    def line(self, frame, lineno):
        code, key = frame.f_code, id(frame)
        known = self.codes.get(code)
        if known is None:  # one lookup per event, not three: this runs for every line
            known = self.codes[code] = (self.file(code.co_filename), getattr(code, "co_qualname", code.co_name),
                                        self.loops_of(code.co_filename))
        f, function, loops = known
        if code.co_name in COMPREHENSIONS:
            self.comprehension(frame, f, function, lineno, loops)
        pending = self.pending.pop(key, None)
        if pending is not None and pending[0] is frame:
            loop = pending[1]
            if loop.first < lineno <= loop.last:
                self.iteration(frame, f, function, loop)
        self.counts.pop((key, ("comprehension", lineno)), None)  # a 3.12 inlined one starts afresh
        loop = loops.get(lineno)
        if loop is not None:
            previous = self.last_line.get(key, (None, 0))
            if previous[0] is not frame or not loop.first <= previous[1] <= loop.last:
                self.counts[(key, lineno)] = 0  # entered afresh
            self.pending[key] = (frame, loop)
        self.last_line[key] = (frame, lineno)
        self.add(["L", f, lineno, function])

    def returned(self, frame):
        key = id(frame)
        self.pending.pop(key, None)
        self.last_line.pop(key, None)
        self.counts.pop(key, None)
        self.iterated.pop(key, None)

    def comprehension(self, frame, f, function, lineno, loops):
        """Before 3.12 (and a generator expression after) a comprehension is a frame of its own
        whose `.0` is the iterator it takes; each turn ends in a line event, the value it took
        bound: the first line event is its start, every later one an iteration."""
        key = id(frame)
        index = self.counts.get(key)
        names = frame.f_locals
        if index is None:
            self.counts[key] = 0
            loop = loops.get(("comprehension", lineno))
            self.iterated[key] = self.iterator_source(names.get(".0"), loop.text if loop else "")
            return
        values = [names[n] for n in frame.f_code.co_varnames if n != ".0" and n in names]
        if values:
            self.counts[key] = index + 1
            self.add(["I", f, lineno, function, self.values.describe(values[0] if len(values) == 1 else tuple(values)),
                      self.iterated.get(key), index + 1])

    def inlined(self, frame, loop):
        """A 3.12 list, set or dict comprehension runs in its frame's own (PEP 709): a turn
        ends in a jump back on its line, its target bound in the frame's locals."""
        key = (id(frame), ("comprehension", loop.first))
        index = self.counts[key] = self.counts.get(key, 0) + 1
        if index == 1:
            self.iterated[key] = self.source(frame, loop)
        names = frame.f_locals
        values = [names.get(n) for n in loop.names]
        f, function, _ = self.codes[frame.f_code]
        self.add(["I", f, loop.first, function, self.values.describe(values[0] if len(values) == 1 else tuple(values)),
                  self.iterated.get(key), index])

    def iterator_source(self, iterator, text):
        container, left = iterator_contents(iterator)
        if container is None:
            return [type(iterator).__name__ if iterator is not None else None, [], "", "", text]
        made = self.provenance.get(id(left), (None, None))
        hashed = "+".join(sorted(set().union(*(_basis(e) for e in itertools.islice(left, 16))))) \
            if container in UNORDERED_CONTAINERS else ""
        return [container, _element_types(list(itertools.islice(left, 16))), hashed,
                made[0] if made[1] is left else "", text, _keys(left) if container in UNORDERED_CONTAINERS else []]

    def iteration(self, frame, f, function, loop):
        names = frame.f_locals
        values = [names.get(n) for n in loop.names]
        key = (id(frame), loop.first)
        index = self.counts[key] = self.counts.get(key, 0) + 1
        if index == 1:  # what it iterates is looked at once a loop run: every turn would cost the loop's length
            self.iterated[key] = self.source(frame, loop)
        value = self.values.describe(values[0] if len(values) == 1 else tuple(values))
        self.add(["I", f, loop.first, function, value, self.iterated.get(key), index])

    def called(self, frame, what, result):
        code = frame.f_code
        if self.stopped or not self.traced(code.co_filename) or (what in ("id", "hash") and code.co_name in HASHING):
            return
        if isinstance(result, (list, tuple)) or what == "os.scandir":
            self.provenance[id(result)] = (what, result)
        self.source_at[(code.co_filename, frame.f_lineno)] = what
        value = self.values.describe(result) if what != "id" else self.values.address(result)
        self.add(["S", self.file(code.co_filename), frame.f_lineno, getattr(code, "co_qualname", code.co_name),
                  value, [None, [], "", what, what + "()"]])

    # what a loop iterated, seen without running user code
    def source(self, frame, loop):
        node, obj = loop.iterable, None
        try:
            while isinstance(node, ast.Call) and len(node.args) == 1 and self.resolve(node.func, frame) in UNWRAPPED:
                node = node.args[0]
            obj = self.resolve(node, frame)
        except LookupError:
            obj = None
        if obj is None:
            made = self.source_at.get((frame.f_code.co_filename, loop.first))
            return [None, [], "", made or "", loop.text]
        made = self.provenance.get(id(obj), (None, None))
        return [_type_name(obj), _element_types(obj), _hashed_by(obj), made[0] if made[1] is obj else "", loop.text,
                _keys(obj)]

    def resolve(self, node, frame):
        if isinstance(node, ast.Name):
            for scope in (frame.f_locals, frame.f_globals, vars(builtins)):
                if node.id in scope:
                    return scope[node.id]
            raise LookupError(node.id)
        if isinstance(node, ast.Attribute):
            owner = self.resolve(node.value, frame)
            try:
                return vars(owner)[node.attr]  # never a property: that would run user code
            except (TypeError, KeyError):
                raise LookupError(node.attr)
        raise LookupError("not a name")

    def write(self):
        self.disable()
        data = {"python": "%d.%d" % sys.version_info[:2], "mode": self.mode, "stopped": self.stopped,
                "seconds": round(time.monotonic() - self.started, 3), "max_events": self.max_events,
                "files": sorted(self.files, key=self.files.get), "events": self.events}
        text = json.dumps(data, separators=(",", ":"))  # at once: json.dump encodes in Python, piece by piece
        with open(self.out, "w") as f:
            f.write(text)


RETURN_VALUE = dis.opmap.get("RETURN_VALUE")


def _yielded(frame):
    """settrace says "return" when a generator yields too; its frame lives on."""
    code = frame.f_code
    return bool(code.co_flags & inspect.CO_GENERATOR) and code.co_code[frame.f_lasti] != RETURN_VALUE


class SettraceTracer(Tracer):
    mode = "settrace"

    def enable(self):
        sys.settrace(self.global_trace)

    def disable(self):
        sys.settrace(None)

    def global_trace(self, frame, event, arg):
        if self.stopped or not self.traced(frame.f_code.co_filename):
            return None
        self.start_of(frame)
        return self.local_trace

    def local_trace(self, frame, event, arg):
        if self.stopped:
            return None
        if event == "line":
            self.line(frame, frame.f_lineno)
        elif event == "return" and not _yielded(frame):
            self.returned(frame)
        return self.local_trace


class MonitoringTracer(Tracer):
    mode = "sys.monitoring"

    def enable(self):
        self.jumping = set()  # code objects already looked at for comprehensions
        monitoring = sys.monitoring
        self.tool = next(t for t in range(6) if monitoring.get_tool(t) is None)
        monitoring.use_tool_id(self.tool, "buildfuzz-lines")
        events = monitoring.events
        monitoring.register_callback(self.tool, events.PY_START, self.on_start)
        monitoring.register_callback(self.tool, events.LINE, self.on_line)
        monitoring.register_callback(self.tool, events.PY_RETURN, self.on_return)
        monitoring.register_callback(self.tool, events.JUMP, self.on_jump)
        monitoring.set_events(self.tool, events.PY_START | events.LINE | events.PY_RETURN)

    def disable(self):
        tool = getattr(self, "tool", None)
        if tool is not None:
            sys.monitoring.set_events(tool, 0)
            sys.monitoring.free_tool_id(tool)
            self.tool = None

    def on_start(self, code, offset):
        if self.stopped or not self.traced(code.co_filename):
            return sys.monitoring.DISABLE
        if code not in self.jumping:  # a comprehension's turn ends in a jump back on its own line: no LINE event
            self.jumping.add(code)
            loops = self.loops_of(code.co_filename)
            if code.co_name in COMPREHENSIONS or any(("comprehension", line) in loops for _, _, line in code.co_lines()):
                sys.monitoring.set_local_events(self.tool, code, sys.monitoring.events.JUMP)
        self.start_of(sys._getframe(1))

    def on_jump(self, code, offset, destination):
        if self.stopped:
            return sys.monitoring.DISABLE
        if destination >= offset:
            return None
        frame = sys._getframe(1)
        if code.co_name in COMPREHENSIONS:
            self.line(frame, frame.f_lineno)
            return None
        loop = self.loops_of(code.co_filename).get(("comprehension", frame.f_lineno))
        if loop is not None and _line_at(code, destination) == frame.f_lineno and code in self.codes:
            self.inlined(frame, loop)

    def on_line(self, code, lineno):
        if self.stopped or not self.traced(code.co_filename):
            return sys.monitoring.DISABLE
        self.line(sys._getframe(1), lineno)

    def on_return(self, code, offset, value):
        if self.stopped or not self.traced(code.co_filename):
            return sys.monitoring.DISABLE
        self.returned(sys._getframe(1))


def _line_at(code, offset):
    return next((line for start, end, line in code.co_lines() if start <= offset < end), None)


def _start(out):
    kind = MonitoringTracer if sys.version_info >= (3, 12) else SettraceTracer
    tracer = kind(out, int(os.environ.pop("BUILDFUZZ_LINES_MAX_EVENTS", "1000000")),
                  float(os.environ.pop("BUILDFUZZ_LINES_BUDGET_S", "60")))
    if sys.version_info < (3, 8):  # the source positions loops are read by came in 3.8
        tracer.stopped = "needs Python 3.8 or later"
        atexit.register(tracer.write)
        return
    wrap_sources(tracer)
    atexit.register(tracer.write)
    tracer.enable()


def _chain():
    """The user's own sitecustomize, which this one shadows on the path."""
    import importlib.machinery
    import importlib.util
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


_out = os.environ.pop("BUILDFUZZ_LINES_OUT", "")
if _out:
    _start(_out)
_chain()
