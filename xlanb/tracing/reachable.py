"""The NumPy bit generators a traced function can draw from, found without a heap scan.

Tracing must notice a generator that is drawn from while tracing but is not an argument
(`model.rng.normal()`): its numbers would be baked into the program.  It compares the
states of the generators the function can reach before and after the trace.  Scanning
every object in the process for them (`gc.get_objects()`) cost 20-60 ms per trace in a
notebook; this walks only what the function can name:

- the start: the function (its globals, closure cells, defaults, a bound method's
  object), its arguments, and NumPy's global RandomState;
- a Python function adds the names its code uses (`co_names`: globals *and* attribute
  names) and is walked like the start, except that the globals of library functions
  (NumPy, xlanb, the standard library) are not (their closures are: `grad(loss)` holds
  `loss`), and library modules are not looked into.  Other installed packages are walked
  as the user's code: one may keep a generator of its own in a module global;
- modules, classes and other objects are looked into only by those names, statically (an
  instance's `__dict__`, its class's `__mro__` dicts, slots; a property's getter is a
  function), so `model.rng`, `helpers.RNG` and `self.sample()` reading `self._rng` are
  found, and no property or `__getattr__` runs;
- containers (list, tuple, dict, set, partial, object arrays) are walked item by item;
  objects of types implemented in C (an `lru_cache` wrapper's cache, a deque, a suspended
  generator's frame, a C extension's object) by what they refer to (`gc.get_referents`),
  and a weak reference by its referent.

Names looked up by computed strings (`getattr(m, "r" + "ng")`) are not seen.  A walk
that grows past WALK_BUDGET objects, or meets a container changed by another thread,
gives up and scans the heap: slower, never incomplete for that reason.
"""
from __future__ import annotations

import functools
import gc
import os
import sys
import sysconfig
import types
import weakref
from typing import Any, Iterable

import numpy as np

from .free_variables import code_names

WALK_BUDGET = 20_000        # objects; past it, scan the whole heap instead
_ATOMS = (np.ndarray, np.generic, int, float, complex, bool, str, bytes, type(None))
_CONTAINERS = (list, tuple, set, frozenset)


def _dirs(*paths) -> tuple[str, ...]:
    return tuple(sorted({os.path.abspath(p) + os.sep for p in paths if p}))


# Code that keeps no NumPy generator of its own (NumPy's global RandomState is a start
# point): xlanb, NumPy and the standard library.  Other installed packages (site-packages)
# are walked as the user's code: one may keep a generator in a module global.
_OWN_DIRS = _dirs(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),   # xlanb
                  os.path.dirname(os.path.abspath(np.__file__)))
_STDLIB_DIRS = _dirs(*(sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib")))
_SITE_DIRS = _dirs(*(sysconfig.get_paths().get(k) for k in ("purelib", "platlib")))


class _Walk:
    def __init__(self):
        self.found: dict[int, Any] = {}           # id -> bit generator
        self.seen: set[int] = set()
        self.names: set[str] = set()
        self.guided: list[Any] = []               # looked into by name: modules, objects
        self.stack: list[Any] = []

    def add(self, value: Any) -> None:
        # type(), not isinstance: isinstance asks a weakref proxy for its referent's class,
        # which raises ReferenceError once the referent is gone (visit skips proxies too)
        if type(value) in weakref.ProxyTypes or \
                isinstance(value, _ATOMS) and not _holds_objects(value):
            return
        if id(value) not in self.seen:
            self.seen.add(id(value))
            self.stack.append(value)

    def add_names(self, names: Iterable[str]) -> None:
        new = set(names) - self.names
        if new:
            self.names |= new
            for obj in self.guided:
                for name in new:
                    self.add(_static_attribute(obj, name))

    def run(self) -> bool:
        """Walk everything reachable; False if the walk outgrew WALK_BUDGET."""
        while self.stack:
            if len(self.seen) > WALK_BUDGET:
                return False
            try:
                self.visit(self.stack.pop())
            except RuntimeError:                  # a container changed size meanwhile
                return False
        return True

    def visit(self, value: Any) -> None:
        if isinstance(value, weakref.ProxyTypes):
            return                                # may be dead; its referent is elsewhere
        if isinstance(value, np.random.BitGenerator):
            self.found[id(value)] = value
        elif isinstance(value, np.random.Generator):
            self.add(value.bit_generator)
        elif isinstance(value, np.random.RandomState):
            self.add(value._bit_generator)
        elif isinstance(value, dict):
            for item in list(value.values()):
                self.add(item)
        elif isinstance(value, _CONTAINERS) or _holds_objects(value):
            for item in (value.flat if isinstance(value, np.ndarray) else value):
                self.add(item)
        elif isinstance(value, types.FunctionType):
            self.visit_function(value)
        elif isinstance(value, types.MethodType):
            self.add(value.__func__)
            self.add(value.__self__)
        elif isinstance(value, functools.partial):
            self.add(value.func)
            self.add(value.args)
            self.add(value.keywords)
        elif isinstance(value, (property, staticmethod, classmethod)):
            for part in ("fget", "fset", "__func__"):
                self.add(getattr(value, part, None))
        elif isinstance(value, types.ModuleType) and _is_library(getattr(value, "__file__", "")):
            return                                # NumPy's own state is a start point
        elif isinstance(value, weakref.ReferenceType):
            self.add(value())                     # calling a weak reference runs no code
        else:
            self.add(_static_attribute(value, "__wrapped__"))     # functools.wraps
            self.guided.append(value)
            for name in self.names:
                self.add(_static_attribute(value, name))
            for item in _unnamed_referents(value):   # held in C: no name leads there
                self.add(item)

    def visit_function(self, fn: types.FunctionType) -> None:
        for cell in fn.__closure__ or ():
            try:
                self.add(cell.cell_contents)
            except ValueError:                    # an empty cell
                pass
        names = code_names(fn.__code__)
        self.add_names(names)                     # `self.rng` read by a library method
        if _is_library(fn.__code__.co_filename):
            return
        namespace = fn.__globals__
        for name in names:
            if name in namespace:
                self.add(namespace[name])
            elif name in sys.modules:             # `import helpers` inside the function
                self.add(sys.modules[name])
        self.add(fn.__defaults__)
        self.add(fn.__kwdefaults__)


def bit_generators(fn: Any, inputs: Iterable[Any]) -> list[Any]:
    """Every bit generator `fn` called on `inputs` can draw from (see the module doc)."""
    walk = _Walk()
    walk.add(np.random.mtrand._rand)
    walk.add(fn)
    for value in inputs:
        walk.add(value)
    if walk.run():
        return list(walk.found.values())
    return heap_bit_generators()


def heap_bit_generators() -> list[Any]:
    """Every bit generator in the process: a walk of the collector's objects (about
    20 ms per 100k objects)."""
    kinds = _subclasses(np.random.BitGenerator)
    # type(), not isinstance: a weakref proxy passes isinstance and may be dead
    return [obj for obj in gc.get_objects() if type(obj) in kinds]


def _subclasses(cls: type) -> set[type]:
    found, stack = set(), [cls]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                stack.append(sub)
    return found


def _static_attribute(obj: Any, name: str) -> Any:
    """`obj.name` without running any code: its `__dict__` entry, a class attribute (a
    property or method as itself), or a slot's value; None if absent."""
    try:
        own = object.__getattribute__(obj, "__dict__")
    except Exception:                             # noqa: BLE001 - no instance dict
        own = None
    if isinstance(own, (dict, types.MappingProxyType)) and name in own:
        return own[name]
    classes = obj.__mro__ if isinstance(obj, type) else type(obj).__mro__
    for klass in classes:
        attribute = klass.__dict__.get(name)
        if attribute is None:
            continue
        if isinstance(attribute, types.MemberDescriptorType) and not isinstance(obj, type):
            try:
                return attribute.__get__(obj, type(obj))      # a slot
            except Exception:                     # noqa: BLE001 - an unset slot
                return None
        return attribute
    return None


def _unnamed_referents(value: Any) -> list[Any]:
    """What `value` refers to that no attribute name reaches: what C code holds (an
    lru_cache's cache, a deque's items, a suspended generator's locals, a C extension
    object's fields), as the collector sees it (`gc.get_referents`, which runs no user
    code).  Empty for an instance of a plain Python class (its class, `__dict__` and slots
    are looked into by name), and for classes and modules (looked into by name only)."""
    if isinstance(value, (type, types.ModuleType)):
        return []
    named = {id(type(value))}
    try:
        own = object.__getattribute__(value, "__dict__")
    except Exception:                             # noqa: BLE001 - no instance dict
        own = None
    if isinstance(own, dict):
        named.add(id(own))
        named.update(id(item) for item in own.values())
    for klass in type(value).__mro__:
        for attribute in list(klass.__dict__.values()):
            if isinstance(attribute, types.MemberDescriptorType):
                try:
                    named.add(id(attribute.__get__(value, type(value))))   # a slot
                except Exception:                 # noqa: BLE001 - an unset slot
                    pass
    return [item for item in gc.get_referents(value) if id(item) not in named]


def _holds_objects(value: Any) -> bool:
    """An ndarray of dtype object: walked item by item like a list."""
    return isinstance(value, np.ndarray) and value.dtype.kind == "O"


def _is_library(filename: str) -> bool:
    """xlanb, NumPy or the standard library (not its site-packages)."""
    if not filename:
        return False
    path = os.path.abspath(filename)
    return path.startswith(_OWN_DIRS) or (path.startswith(_STDLIB_DIRS) and
                                          not path.startswith(_SITE_DIRS))
