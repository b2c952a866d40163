"""The line tracer's sources of nondeterminism (sitecustomize.py, beside it): each call from
traced code is recorded with its result. Loaded with the tracer, never by buildfuzz itself."""
import sys

# (module, attribute, what it is): a call from traced code is recorded with its result
SOURCES = (
    ("os", "listdir", "os.listdir"), ("os", "scandir", "os.scandir"), ("glob", "glob", "glob.glob"),
    ("glob", "iglob", "glob.iglob"), ("uuid", "uuid4", "uuid.uuid4"), ("uuid", "uuid1", "uuid.uuid1"),
    ("random", "random", "random.random"), ("random", "randint", "random.randint"),
    ("random", "randrange", "random.randrange"), ("random", "choice", "random.choice"),
    ("random", "sample", "random.sample"), ("random", "getrandbits", "random.getrandbits"),
    ("random", "uniform", "random.uniform"), ("random", "shuffle", "random.shuffle"),
    ("time", "time", "time.time"), ("time", "time_ns", "time.time_ns"), ("time", "ctime", "time.ctime"),
    ("time", "strftime", "time.strftime"), ("time", "localtime", "time.localtime"),
    ("tempfile", "mkstemp", "tempfile.mkstemp"), ("tempfile", "mkdtemp", "tempfile.mkdtemp"),
    ("tempfile", "mktemp", "tempfile.mktemp"), ("tempfile", "NamedTemporaryFile", "tempfile.NamedTemporaryFile"),
    ("builtins", "id", "id"), ("builtins", "hash", "hash"),
)


def wrap_sources(tracer):
    for name, attribute, what in SOURCES:
        _wrap(tracer, __import__(name), attribute, what)


def _wrap(tracer, module, attribute, what):
    original = getattr(module, attribute, None)
    if original is None:
        return

    def recorded(*args, **kwargs):
        result = original(*args, **kwargs)
        tracer.called(sys._getframe(1), what, result)
        return result

    recorded.__wrapped__ = original
    recorded.__name__ = getattr(original, "__name__", attribute)
    setattr(module, attribute, recorded)
