"""tracing/reachable.py: the bit generators a traced function can draw from, found by walking
what it names instead of the whole heap.  Each way a function can reach a generator must be
found (or a draw while tracing would be baked into the program), and the walk must run no
user code (properties, __getattr__)."""
import collections
import functools
import sys
import types
import weakref

import numpy as np
import pytest

import xlanb
from xlanb.errors import UnsupportedNumPyFunctionError
from xlanb.tracing import reachable


def _found(fn, *inputs) -> set[int]:
    return {id(bg) for bg in reachable.bit_generators(fn, inputs)}


class _Holder:
    def __init__(self, rng):
        self._rng = rng

    def noise(self, n):
        return self._rng.normal(size=n)

    @property
    def exploding(self):
        raise AssertionError("the walk ran a property")

    def __getattr__(self, name):
        raise AssertionError(f"the walk called __getattr__({name!r})")


class _Slotted:
    __slots__ = ("rng", "unset")

    def __init__(self, rng):
        self.rng = rng


def _ways_to_reach():
    """(description, function, inputs, generator it can draw from)."""
    cases = []
    rng = np.random.default_rng(1)
    holder = _Holder(rng)
    cases.append(("a method reading self._rng", lambda x: x + holder.noise(3), (), rng))
    rng2 = np.random.default_rng(2)
    cases.append(("a generator in a closure list", lambda x: x + [rng2][0].normal(), (), rng2))
    rng3 = np.random.default_rng(3)
    table = {"rngs": (rng3,)}
    cases.append(("a dict of tuples", lambda x: x + table["rngs"][0].normal(), (), rng3))
    rng4 = np.random.default_rng(4)
    module = types.ModuleType("xlanb_test_helpers")
    module.RNG = rng4
    sys.modules[module.__name__] = module
    exec("def helper(n):\n    return RNG.normal(size=n)\n", module.__dict__)

    def via_module(x):
        return x + xlanb_test_helpers.helper(3)      # noqa: F821 - a global set below
    via_module.__globals__["xlanb_test_helpers"] = module
    cases.append(("a function of a user module", via_module, (), rng4))
    rng5 = np.random.default_rng(5)
    slotted = _Slotted(rng5)
    cases.append(("a slot", lambda x: x + slotted.rng.normal(), (), rng5))
    rng6 = np.random.RandomState(6)
    part = functools.partial(lambda r, n: r.normal(size=n), rng6)
    cases.append(("a partial's argument (legacy RandomState)", lambda x: x + part(3), (),
                  rng6))
    rng7 = np.random.default_rng(7)
    cases.append(("an object passed as an argument", lambda x, h: x + h.noise(3),
                  (_Holder(rng7),), rng7))

    rng9 = np.random.default_rng(9)
    boxes = np.empty(2, dtype=object)
    boxes[1] = rng9
    cases.append(("an object array", lambda x: x + boxes[1].normal(), (), rng9))

    rng10 = np.random.default_rng(10)

    @functools.lru_cache(None)
    def cached_rng():
        return rng10
    cached_rng()
    cases.append(("an lru_cache's cache", lambda x: x + cached_rng().normal(), (), rng10))
    rng11 = np.random.default_rng(11)
    queue = collections.deque([rng11])
    cases.append(("a deque", lambda x: x + queue[0].normal(), (), rng11))

    def draws(r):
        while True:
            yield r.normal()
    rng12 = np.random.default_rng(12)
    stream = draws(rng12)
    next(stream)
    cases.append(("a suspended generator's locals", lambda x: x + next(stream), (), rng12))
    rng13 = np.random.default_rng(13)
    holder13 = _Holder(rng13)
    ref = weakref.ref(holder13)
    cases.append(("a weak reference", lambda x: x + ref().noise(1), (), rng13))
    cases[-1] += (holder13,)                         # keeps the referent alive

    def default(x, r=np.random.default_rng(8)):
        return x + r.normal()
    cases.append(("a default argument", default, (), default.__defaults__[0]))
    return cases


WAYS = _ways_to_reach()


@pytest.mark.parametrize("what, fn, inputs, rng", [case[:4] for case in WAYS],
                         ids=[case[0] for case in WAYS])
def test_every_way_to_reach_a_generator_is_walked(what, fn, inputs, rng):
    bit_generator = rng.bit_generator if isinstance(rng, np.random.Generator) else \
        rng._bit_generator
    assert id(bit_generator) in _found(fn, *inputs), what


def test_a_dead_weak_proxy_is_skipped():
    """A weakref proxy whose referent is gone (CI met one in a closure's globals): asking it
    anything, isinstance included, raises ReferenceError."""
    class Referent:
        pass
    referent = Referent()
    dead = weakref.proxy(referent)
    del referent

    def f(x):
        return x, dead
    assert _found(f) == {id(np.random.mtrand._rand._bit_generator)}


def test_numpys_global_state_is_always_included():
    assert id(np.random.mtrand._rand._bit_generator) in _found(lambda x: x)


def test_the_walk_runs_no_user_code():
    holder = _Holder(np.random.default_rng(0))

    def f(x):
        return x + holder.exploding + holder.missing       # names it reads, never run
    _found(f)


def test_a_walk_past_the_budget_scans_the_heap(monkeypatch):
    rng = np.random.default_rng(0)
    hidden = {"deep": [[rng]]}
    monkeypatch.setattr(reachable, "WALK_BUDGET", 1)
    assert id(rng.bit_generator) in _found(lambda x: x + hidden["deep"][0][0].normal())


class _Model:
    def __init__(self, rng):
        self._rng = rng

    def noise(self, n):
        return self._rng.normal(size=n)


def test_a_method_draw_while_tracing_is_refused():
    model = _Model(np.random.default_rng(0))

    def f(x):
        return x + model.noise(3)
    with pytest.raises(UnsupportedNumPyFunctionError, match="drawn from while tracing"):
        xlanb.jit(f)(np.zeros(3))


@pytest.mark.parametrize("cached", [True, False], ids=["made before", "made while tracing"])
def test_a_draw_from_a_generator_held_in_c_is_refused(cached):
    """An lru_cache'd generator (its cache lives in C): drawn from while tracing, its numbers
    were baked into the program, the same on every call.  Made by the first call, during
    the trace, it was in no snapshot at all."""
    @functools.lru_cache(None)
    def shared_rng():
        return np.random.default_rng(0)
    if cached:
        shared_rng()

    def f(x):
        return x + shared_rng().normal(size=3)
    with pytest.raises(UnsupportedNumPyFunctionError, match="drawn from while tracing"):
        xlanb.jit(f)(np.zeros(3))


def test_a_generator_made_and_dropped_while_tracing_is_a_constant():
    """A generator made and seeded inside the function gives the same numbers on every
    call under NumPy too: nothing to refuse."""
    def f(x):
        return x + np.random.default_rng(5).normal(size=3)
    x = np.zeros(3)
    np.testing.assert_array_equal(xlanb.jit(f)(x), f(x))


def test_a_generator_in_an_installed_package_is_walked(tmp_path, monkeypatch):
    """A package in site-packages may keep a generator in a module global: its functions'
    globals are walked as the user's (NumPy's, xlanb's and the standard library's are
    not), or its draws while tracing would be baked into the program."""
    site = tmp_path / "site-packages"
    site.mkdir()
    (site / "xlanb_test_installed.py").write_text(
        "import numpy as np\n_RNG = np.random.default_rng(0)\n"
        "def noise(n):\n    return _RNG.normal(size=n)\n")
    monkeypatch.setattr(reachable, "_STDLIB_DIRS", (str(tmp_path) + "/",))
    monkeypatch.setattr(reachable, "_SITE_DIRS", (str(site) + "/",))
    monkeypatch.syspath_prepend(str(site))
    import xlanb_test_installed as installed
    assert id(installed._RNG.bit_generator) in _found(lambda x: x + installed.noise(3))
    with pytest.raises(UnsupportedNumPyFunctionError, match="drawn from while tracing"):
        xlanb.jit(lambda x: x + installed.noise(3))(np.zeros(3))
