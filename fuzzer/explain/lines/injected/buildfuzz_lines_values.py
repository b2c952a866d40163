"""The line tracer's values (sitecustomize.py, beside it): reprs with addresses normalised,
and what a container's elements are and what their hash follows. Loaded with the tracer
from buildfuzz's directory, never by buildfuzz itself."""
import hashlib
import itertools
import re

ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
MAX_VALUE = 160
# an iterator's type → what it walks, for those whose __reduce__ hands back what is left without consuming it
ITERATORS = {"set_iterator": "set", "dict_keyiterator": "dict_keys", "list_iterator": "list",
             "tuple_iterator": "tuple"}
UNORDERED_CONTAINERS = ("set", "dict_keys")
MAX_KEYED = 100_000  # a set larger than this is not read for keys: each is read once per loop run


class Values:
    """Names objects by class and creation ordinal (`Label#3`: the 3rd `Label` whose
    `__init__` ran), else by the order their address was first seen (`Label@2`); an object
    with a repr of its own is its repr after its ordinal, when its `__init__` was seen."""

    def __init__(self):
        self.created, self.made, self.seen = {}, {}, {}

    def initialised(self, obj):
        kind = type(obj)
        if obj is not None and self.created.get(id(obj), (None,))[0] is not kind:
            n = self.made[kind] = self.made.get(kind, 0) + 1
            self.created[id(obj)] = (kind, "%s#%d" % (kind.__qualname__, n))

    def describe(self, value, depth=0):
        kind = type(value)
        if value is None or kind in (bool, int, float, str, bytes):
            text = repr(value)
        elif kind in (tuple, list) and depth < 2:
            inner = ", ".join(self.describe(v, depth + 1) for v in value[:8]) + (", ..." if len(value) > 8 else "")
            text = ("(%s)" if kind is tuple else "[%s]") % inner
        elif kind in (set, frozenset, dict):
            text = "%s of %d" % (kind.__name__, len(value))  # its order shows where it is iterated
        elif kind.__repr__ is object.__repr__:
            known = self.created.get(id(value))
            text = "<%s>" % (known[1] if known and known[0] is kind else self.address(id(value), kind.__qualname__))
        else:
            try:
                text = ADDRESS.sub(lambda m: self.address(int(m.group(), 16)), repr(value))
            except Exception:
                text = "<%s: repr failed>" % kind.__qualname__
            known = self.created.get(id(value))
            if known and known[0] is kind:  # a repr may not tell objects apart (PeachPy's unnamed Name: `<?>`)
                text = "%s %s" % (known[1], text)
        return text if len(text) <= MAX_VALUE else text[:MAX_VALUE - 3] + "..."

    def address(self, address, kind=""):
        n = self.seen.setdefault(address, len(self.seen) + 1)
        return "%s@%d" % (kind, n)


def iterator_contents(iterator):
    """What an iterator walks and a copy of what it has left; (None, ()) for other iterators."""
    container = ITERATORS.get(type(iterator).__name__)
    return (container, iterator.__reduce__()[1][0]) if container else (None, ())


def _type_name(obj):
    kind = type(obj)
    return kind.__qualname__ if kind.__module__ == "builtins" else "%s.%s" % (kind.__module__, kind.__qualname__)


def _element_types(obj):
    if not isinstance(obj, (set, frozenset, dict, list, tuple, type({}.keys()))):
        return []
    types = []
    for element in itertools.islice(obj, 16):
        name = _type_name(element)
        if name not in types:
            types.append(name)
    return types


def _hashed_by(obj):
    """What the hash of a set's (a dict's keys') elements follows, as far as their types say."""
    if not isinstance(obj, (set, frozenset, dict, type({}.keys()))):
        return ""
    bases = set()
    for element in itertools.islice(obj, 16):
        bases.update(_basis(element))
    return "+".join(sorted(bases))


def _basis(element):
    kind = type(element)
    if kind in (str, bytes):
        return {"str"}
    if kind is tuple:
        return set().union(*(_basis(e) for e in element)) if element else {"value"}
    if kind in (int, float, bool, complex):
        return {"value"}
    hashing = kind.__hash__
    if hashing is object.__hash__ or element is None:
        return {"address"}
    code = getattr(hashing, "__code__", None)
    if code is None:
        return {"builtin"}
    # what its code calls: id() is an address; hash() of its fields, its own (a str field's follows the seed)
    return {"address"} | ({"own"} if "hash" in code.co_names else set()) if "id" in code.co_names else {"own"}



def _keys(obj):
    """The attributes every element of a set of objects carries with a distinct str (or
    int) value, each with a digest of its sorted values: a sort key that follows no
    address, which the replays can compare. Read from `__dict__` and slots, running no
    user code (no property, no __getattr__)."""
    if not isinstance(obj, (set, frozenset, type({}.keys()))) or not obj or len(obj) > MAX_KEYED:
        return []
    fields = [_fields(e) for e in obj]
    keys = []
    for name in fields[0]:
        values = [f.get(name) for f in fields]
        kinds = set(type(v) for v in values)
        if len(kinds) == 1 and kinds <= {str, int} and len(set(values)) == len(values):
            keys.append([name, hashlib.sha256(repr(sorted(values)).encode()).hexdigest()[:16]])
    return keys


def _fields(element):
    kind = type(element)
    if kind.__module__ == "builtins":
        return {}  # a str, a tuple: sorted() itself orders them
    try:
        found = dict(object.__getattribute__(element, "__dict__"))
    except (AttributeError, TypeError):
        found = {}
    for klass in kind.__mro__:
        for slot in klass.__dict__.get("__slots__", ()) if klass is not object else ():
            descriptor = klass.__dict__.get(slot)
            if type(descriptor).__name__ == "member_descriptor":
                try:
                    found.setdefault(slot, descriptor.__get__(element, kind))
                except AttributeError:
                    pass  # a slot not set
    return {k: v for k, v in found.items() if not k.startswith("__")}
