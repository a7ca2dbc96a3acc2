"""Pickling and deep-copying agents whose state lives in Numba structrefs.

A structref proxy only holds a pointer to memory that Numba manages, so neither ``pickle`` nor
``copy.deepcopy`` can handle it.  :func:`encode_attributes` turns an agent's ``__dict__`` into
plain, picklable data: every structref (nested ones included) becomes a
:class:`StructRefSnapshot` -- its proxy class and its fields by name, read with one compiled
accessor per structref type -- and :func:`decode_attributes` rebuilds the structrefs through
their proxy constructors.

Everything the original shared stays shared in the copy:

* Numba hands back the very NumPy arrays and ``numpy.random.Generator`` objects that were passed
  to the structref's constructor, so an attribute such as ``agent.wins`` that *is* the state's
  array, and the generator that the agent and all its nested states draw from, are one object in
  the encoded data; pickle's and deepcopy's memo keep them one object after the round trip (the
  generator continues its exact stream).
* Arrays that a kernel allocated itself come back as a new Python object at every read; they are
  matched by their memory (address, shape, strides, dtype), so two fields holding the same buffer
  still hold one buffer after the round trip.
* An attribute that is a *view* into a state array (e.g. a read-only view, or a row) is stored as
  its offset, shape and strides into that array and rebuilt as a view of the restored array.
* A structref reachable along two paths (an attribute aliasing a nested state) is encoded once.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba.core import types
from numba.experimental.structref import StructRefProxy
from numba.extending import overload
from numpy.lib.array_utils import byte_bounds

__all__ = ["StructRefSnapshot", "read_fields", "encode_attributes", "decode_attributes"]


def _all_fields(state: Any) -> tuple:
    """Every field of a structref, in declaration order (compiled code only, see :func:`read_fields`)."""
    raise TypeError("_all_fields is only callable from compiled code")


@overload(_all_fields)
def _overload_all_fields(state):
    if not isinstance(state, types.StructRef):
        return None
    # Field access is resolved at compile time, so the implementation is written for the field
    # names of this structref type (identifiers taken from its Numba type, nothing else).
    fields = "".join(f"state.{name}, " for name in state.field_dict)
    namespace: dict[str, Any] = {}
    exec(f"def implementation(state):\n    return ({fields})\n", namespace)  # noqa: S102
    return namespace["implementation"]


# Not cached on disk: the cache index would name every structref type ever read, and loading it
# fails in a process that cannot import one of them (a user's agent defined in a script or a test).
@numba.njit
def _read_all_fields(state):
    return _all_fields(state)


def read_fields(state: StructRefProxy) -> dict[str, Any]:
    """The fields of a structref state by name, as Python objects.

    Arrays and generators that were passed to the structref's constructor come back as the very
    same Python objects; nested structrefs come back as proxies.
    """
    return dict(zip(state._numba_type_.field_dict, _read_all_fields(state)))


class StructRefSnapshot:
    """The fields of one structref as plain Python values, and the proxy class that rebuilds it.

    Attributes
    ----------
    proxy_class : type
        The ``StructRefProxy`` subclass; ``proxy_class(**fields)`` rebuilds an
        :class:`~dueling_gym.agents.state.AgentState` (``proxy_class(*fields.values())`` a plain
        proxy).
    fields : dict
        Field name -> value (array, generator, scalar or a nested :class:`StructRefSnapshot`), in
        the order of the proxy constructor.  An agent's ``__setstate__`` may change a field here
        (e.g. an id into a process-wide registry) before the state is rebuilt.
    read_only : frozenset of str
        Array fields whose Numba type is read-only; they are marked read-only again before the
        rebuild so the rebuilt state has the same Numba type (and reuses compiled kernels).
    """

    __slots__ = ("proxy_class", "fields", "read_only")

    def __init__(self, proxy_class: type, fields: dict[str, Any], read_only: frozenset[str]):
        self.proxy_class = proxy_class
        self.fields = fields
        self.read_only = read_only

    def __getstate__(self) -> tuple:
        return self.proxy_class, self.fields, self.read_only

    def __setstate__(self, state: tuple) -> None:
        self.proxy_class, self.fields, self.read_only = state

    def __repr__(self) -> str:
        return f"StructRefSnapshot({self.proxy_class.__name__}, fields={list(self.fields)})"


class _ArrayView:
    """An array that views the buffer of a state array: rebuilt as the same view of the restored array."""

    __slots__ = ("base", "offset", "shape", "strides", "dtype", "writeable")

    def __init__(self, base: np.ndarray, offset: int, shape: tuple, strides: tuple, dtype: np.dtype, writeable: bool):
        self.base, self.offset, self.shape, self.strides = base, offset, shape, strides
        self.dtype, self.writeable = dtype, writeable

    def __getstate__(self) -> tuple:
        return self.base, self.offset, self.shape, self.strides, self.dtype, self.writeable

    def __setstate__(self, state: tuple) -> None:
        self.base, self.offset, self.shape, self.strides, self.dtype, self.writeable = state

    def rebuild(self) -> np.ndarray:
        view = np.ndarray(self.shape, self.dtype, buffer=self.base, offset=self.offset, strides=self.strides)
        view.flags.writeable = self.writeable
        return view


def _memory_key(array: np.ndarray) -> tuple:
    return array.__array_interface__["data"][0], array.shape, array.strides, array.dtype.str


class _Encoder:
    """One encoding pass: memos keep shared structrefs and buffers shared."""

    def __init__(self) -> None:
        self.snapshots: dict[int, StructRefSnapshot] = {}
        self.state_arrays: dict[tuple, np.ndarray] = {}
        self.roots: list[np.ndarray] = []

    # -- structrefs ------------------------------------------------------------------------------
    def snapshot(self, proxy: StructRefProxy) -> StructRefSnapshot:
        key = proxy._meminfo.data
        snapshot = self.snapshots.get(key)
        if snapshot is None:
            struct_type = proxy._numba_type_
            values = _read_all_fields(proxy)
            read_only = frozenset(
                name for name, field_type in struct_type.field_dict.items()
                if isinstance(field_type, types.Array) and not field_type.mutable
            )
            snapshot = StructRefSnapshot(type(proxy), {}, read_only)
            self.snapshots[key] = snapshot  # before the fields: a cycle would otherwise recurse forever
            snapshot.fields.update(
                (name, self.field_value(value)) for name, value in zip(struct_type.field_dict, values)
            )
        return snapshot

    def field_value(self, value: Any) -> Any:
        if isinstance(value, StructRefProxy):
            return self.snapshot(value)
        if isinstance(value, np.ndarray):
            return self.state_arrays.setdefault(_memory_key(value), value)
        if type(value) is tuple:
            return tuple(self.field_value(item) for item in value)
        return value

    def collect(self, value: Any) -> None:
        """Snapshot every structref reachable from ``value`` through plain containers."""
        if isinstance(value, StructRefProxy):
            self.snapshot(value)
        elif type(value) in (list, tuple):
            for item in value:
                self.collect(item)
        elif type(value) is dict:
            for item in value.values():
                self.collect(item)

    def resolve_views(self) -> None:
        """Find the state arrays that own their memory and store the others as views of them."""
        arrays = sorted(self.state_arrays.values(), key=lambda array: -array.nbytes)
        for array in arrays:
            if self.view_of_root(array) is array:
                self.roots.append(array)
        for snapshot in self.snapshots.values():
            for name, value in snapshot.fields.items():
                if isinstance(value, np.ndarray):
                    snapshot.fields[name] = self.view_of_root(value)

    def view_of_root(self, array: np.ndarray) -> Any:
        """``array`` itself, or an :class:`_ArrayView` when it lies inside the buffer of a root state array."""
        if array.size == 0:
            return array
        low, high = byte_bounds(array)
        for root in self.roots:
            if root is array:
                return array
            if root.size == 0 or not root.flags.c_contiguous:
                continue
            start, stop = byte_bounds(root)
            if start <= low and high <= stop:
                if _memory_key(root) == _memory_key(array) and root.flags.writeable == array.flags.writeable:
                    return root  # the same buffer seen through another Python object
                offset = array.__array_interface__["data"][0] - start
                return _ArrayView(root, offset, array.shape, array.strides, array.dtype, bool(array.flags.writeable))
        return array

    # -- Python attributes -----------------------------------------------------------------------
    def attribute(self, value: Any) -> Any:
        if isinstance(value, StructRefProxy):
            return self.snapshot(value)
        if isinstance(value, np.ndarray):
            return self.view_of_root(value)
        if type(value) in (list, tuple):
            items = [self.attribute(item) for item in value]
            unchanged = all(new is old for new, old in zip(items, value))
            return value if unchanged else type(value)(items)
        if type(value) is dict:
            items = {key: self.attribute(item) for key, item in value.items()}
            return value if all(items[key] is value[key] for key in value) else items
        return value


def encode_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """A picklable, deep-copyable version of an agent's ``__dict__`` (see the module docstring)."""
    encoder = _Encoder()
    for value in attributes.values():  # every state array must be known before attributes are matched
        encoder.collect(value)
    encoder.resolve_views()
    return {name: encoder.attribute(value) for name, value in attributes.items()}


def decode_attributes(encoded: dict[str, Any]) -> dict[str, Any]:
    """Inverse of :func:`encode_attributes`: rebuild the structrefs and the views into their arrays."""
    rebuilt: dict[int, Any] = {}

    def state(snapshot: StructRefSnapshot) -> StructRefProxy:
        proxy = rebuilt.get(id(snapshot))
        if proxy is None:
            arguments = {}
            for name, value in snapshot.fields.items():
                value = decode(value)
                if name in snapshot.read_only and isinstance(value, np.ndarray):
                    value.flags.writeable = False
                arguments[name] = value
            if getattr(snapshot.proxy_class, "field_names", None):  # an AgentState: built by keyword
                proxy = snapshot.proxy_class(**arguments)
            else:  # a plain structref proxy: positional, in field order
                proxy = snapshot.proxy_class(*arguments.values())
            rebuilt[id(snapshot)] = proxy
        return proxy

    def decode(value: Any) -> Any:
        if isinstance(value, StructRefSnapshot):
            return state(value)
        if isinstance(value, _ArrayView):
            return value.rebuild()
        if type(value) in (list, tuple):
            items = [decode(item) for item in value]
            return value if all(new is old for new, old in zip(items, value)) else type(value)(items)
        if type(value) is dict:
            items = {key: decode(item) for key, item in value.items()}
            return value if all(items[key] is value[key] for key in value) else items
        return value

    return {name: decode(value) for name, value in encoded.items()}
