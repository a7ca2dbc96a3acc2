"""The compiled state of the kernel agents: :class:`AgentState` and its Numba types.

A :class:`~dueling_gym.agents.KernelDuelingAgent` or :class:`~dueling_gym.agents.KernelBanditAgent`
keeps its whole learning state in a Numba structref (arrays, scalars and the agent's
``numpy.random.Generator``), so that its kernels and the fused simulation loop of
:mod:`dueling_gym.experiments` read and write the same object.  A state is an
:class:`AgentState` subclass declared by its field names and built by keyword; declaring it
registers its Numba type (an :class:`AgentStateType` subclass) and its compiled constructor,
both found again by module and name, which is what pickling and Numba's on-disk cache need.

This module knows nothing of agents (the agent classes are in :mod:`dueling_gym.agents.base`),
and the constructors are compiled against this file alone, so editing an agent class leaves
every cached constructor valid.
"""

from __future__ import annotations

import keyword
import sys
from typing import Any, Callable, ClassVar, Iterable

import numba
from numba.core import types
from numba.experimental import structref

__all__ = ["AgentStateType", "AgentState"]


class AgentStateType(types.StructRef):
    """Base of the Numba structref types that hold a kernel agent's state.

    :class:`AgentState` creates and registers one subclass per agent state;
    literal field types (e.g. a Python ``True`` passed at construction) are widened so one
    compiled kernel serves every state of that agent.
    """

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class AgentState(structref.StructRefProxy):
    """Base of the Python proxies of kernel agent states: a state declared by its field names.

    A subclass names its fields in the class statement and is then built by keyword::

        class RUCBState(AgentState, fields=["rng", "wins", "t"]):
            ...  # a docstring

        state = RUCBState(rng=rng, wins=np.zeros((3, 3), dtype=np.int64), t=0)

    Declaring the subclass creates and registers its Numba type, an :class:`~dueling_gym.agents.state.AgentStateType`
    subclass available as ``RUCBState.numba_type`` and, for a class defined at module level, as
    the module attribute ``RUCBStateType`` next to the proxy (pickle and Numba's on-disk cache
    index find types by module and name, so the name stays the one of a hand-written type), and
    defines the proxy's constructor (in Python and in compiled code) and its boxing.  Fields are
    stored in declaration order; construction requires every field, by keyword, and raises
    :class:`TypeError` naming the missing or unexpected ones.  A state class must live in an
    importable module: one declared in ``__main__`` is a :class:`TypeError` (Numba rebuilds the
    class from a pickle, which for ``__main__`` is a copy without its fields).

    Attributes
    ----------
    field_names : tuple of str
        The fields, in declaration order.
    numba_type : type
        The registered :class:`~dueling_gym.agents.state.AgentStateType` subclass of this state.
    """

    field_names: ClassVar[tuple[str, ...]] = ()
    numba_type: ClassVar[type[AgentStateType]]

    def __init_subclass__(cls, *, fields: Iterable[str] | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__module__ == "__main__":
            # Numba hands a state back to Python by rebuilding its class from a pickle; a class of
            # ``__main__`` is pickled by value and comes back as a copy without its fields, so every
            # construction would fail later, far from the cause.
            raise TypeError(
                f"{cls.__name__} is defined in __main__ (a script run directly): Numba cannot build the "
                "states of such a class; define the agent and its state in an importable module "
                "(e.g. my_agents.py next to the script) and import it from there"
            )
        if fields is None:
            raise TypeError(f"{cls.__name__} must name its fields: class {cls.__name__}(AgentState, fields=[...])")
        names = tuple(fields)
        for name in names:
            if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) or name == "_STATE_CLASS":
                raise TypeError(f"{cls.__name__}: field names must be identifiers, got {name!r}")
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise TypeError(f"{cls.__name__}: duplicate fields {duplicates}")
        if not names:
            raise TypeError(f"{cls.__name__} must have at least one field")
        type_name = f"{cls.__name__}Type"
        numba_type = type(type_name, (AgentStateType,), {
            "__module__": cls.__module__,
            "__qualname__": f"{cls.__qualname__}Type",
            "__doc__": f"Numba type of :class:`{cls.__name__}`.",
        })
        module = sys.modules.get(cls.__module__)
        if module is not None and "." not in cls.__qualname__:
            # Pickle (Numba's cache index included) finds the type by module and name.
            existing = getattr(module, type_name, None)
            reloaded = isinstance(existing, type) and issubclass(existing, AgentStateType)
            if existing is not None and not reloaded:
                raise TypeError(
                    f"{cls.__module__}.{type_name} already exists; {cls.__name__} needs that name for its Numba type"
                )
            setattr(module, type_name, numba_type)
        structref.register(numba_type)
        cls.field_names = names
        cls.numba_type = numba_type
        structref.define_proxy(cls, numba_type, list(names))

    def __new__(cls, *args: Any, **values: Any) -> AgentState:
        if args:
            raise TypeError(
                f"{cls.__name__} takes its fields by keyword ({', '.join(cls.field_names)}); "
                f"got {len(args)} positional argument(s)"
            )
        missing = [name for name in cls.field_names if name not in values]
        unexpected = sorted(name for name in values if name not in cls.field_names)
        if missing or unexpected:
            problems = []
            if missing:
                problems.append(f"missing field(s) {', '.join(missing)}")
            if unexpected:
                problems.append(f"unexpected field(s) {', '.join(unexpected)}")
            raise TypeError(f"{cls.__name__}: {'; '.join(problems)}")
        return _state_constructor(cls)(*(values[name] for name in cls.field_names))


def _state_constructor(cls: type[AgentState]) -> Callable[..., AgentState]:
    """The compiled constructor of a state class, cached on disk.

    Numba's own proxy constructor is a fresh ``njit`` function per class that is never cached,
    so every process compiled every state it built (about half a second per agent), and it
    takes its fields as ``*args``, which Numba types in Python at every call (0.2 ms for a
    20-field state).  This one names each field as a parameter (typed by Numba's C fast path:
    0.02 ms) and is compiled with Numba's on-disk cache: its code object is attributed to this
    file, whose stamp Numba checks, and its name carries the class's module and name, so every
    class has its own cache entry.  Classes another process could not import by name (defined
    inside a function) are compiled per process instead; ``__main__`` is refused at declaration.
    """
    constructor = cls.__dict__.get("_compiled_constructor")
    if constructor is None:
        name = "construct_" + f"{cls.__module__}.{cls.__qualname__}".replace(".", "_").replace("<", "").replace(">", "")
        parameters = ", ".join(cls.field_names)
        source = f"def {name}({parameters}):\n    return _STATE_CLASS({parameters})\n"
        # The function lives in this module's name space as far as Numba's cache is concerned.
        namespace: dict[str, Any] = {"__name__": __name__, "_STATE_CLASS": cls}
        exec(compile(source, __file__, "exec"), namespace)  # noqa: S102 - field names are checked identifiers
        importable = "<" not in cls.__qualname__
        constructor = numba.njit(cache=importable, nogil=True)(namespace[name])
        cls._compiled_constructor = constructor
    return constructor
