"""Cascade click models: the simulated user of an interleaved comparison, and the named tables.

This module holds :class:`CascadeClickModel`, its kernel :func:`cascade_clicks`, the named
models per grade scale (:data:`CLICK_MODEL_TABLES`) and the choice of a table for a data set
(:func:`click_model`, :func:`parse_click_model`, :func:`select_click_model`).  The
interleaving methods that show the user a list are in :mod:`dueling_gym.problems.interleaving`,
which re-exports these names.

**Cascade click models** (Hofmann, Whiteson & de Rijke, ACM TOIS 31(4), 2013, Section 6): the
user scans the list from the top; a document of grade ``g`` is clicked with probability
``click[g]``; after a click the user stops with probability ``stop[g]``, otherwise (and after a
skipped document) moves on.  The probability of a click at rank ``r`` is therefore
``click[g_r] * prod_{s < r} (1 - click[g_s] stop[g_s])``.  The named models exist for the two
grade scales of the public data sets, five grades (MSLR-WEB10K/30K, Yahoo! LTR: 0-4) and three
grades (LETOR 4.0 MQ2007/MQ2008: 0-2), in ``CLICK_MODEL_TABLES``:

==============  ==========================  ==========================
five grades     P(click | grade 0..4)       P(stop | click, grade 0..4)
==============  ==========================  ==========================
perfect         0.0  0.2  0.4  0.8  1.0     0.0  0.0  0.0  0.0  0.0
navigational    0.05 0.3  0.5  0.7  0.95    0.2  0.3  0.5  0.7  0.9
informational   0.4  0.6  0.7  0.8  0.9     0.1  0.2  0.3  0.4  0.5
==============  ==========================  ==========================

==============  ==========================  ==========================
three grades    P(click | grade 0..2)       P(stop | click, grade 0..2)
==============  ==========================  ==========================
perfect         0.0  0.5  1.0               0.0  0.0  0.0
navigational    0.05 0.5  0.95              0.2  0.5  0.9
informational   0.4  0.7  0.9               0.1  0.3  0.5
==============  ==========================  ==========================

Source: the cascade click models of the online learning-to-rank experiments of Oosterhuis & de
Rijke ("Differentiable Unbiased Online Learning to Rank", CIKM 2018, experimental setup), which
use the three-grade table on MQ2007/MQ2008 and the five-grade one on MSLR-WEB10K and Yahoo!.
Both tables were checked value by value against that paper's published experiment code
(github.com/HarrieO/OnlineLearningToRank, ``utils/clicks.py``: ``short_models`` for three grades,
``long_models`` for five, chosen per data set in ``utils/datasetcollections.py``) and against an
independent implementation of later work that uses the same numbers per data set; the paper's
own text was not available to check the section and table number against.

**Which table** (``select_click_model``).  A bare name (``"perfect"``) takes the table of
the data's grade scale, read off its largest grade: up to 2, three grades; 3 or 4, five grades;
above 4, no named table applies and the data is refused (give a custom model).  A name with a
scale (``"perfect:5"``) forces that table; it is refused when the data has a grade beyond it.
Forcing the five-grade table onto 0-2 data is allowed (a sample of five-grade data may lack the
top grades), but only when asked for: by itself such data gets the three-grade table, whose
top grade ``perfect`` clicks with probability 1 (the five-grade table would click it with 0.4).
A custom model (``{"click": [...], "stop": [...]}`` or a :class:`CascadeClickModel`) covers
grades ``0 .. n_grades - 1`` and is refused for data with a higher grade.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.problems.ltr_kernels import jit_in_place
from dueling_gym.validation import check_integer, check_probability, check_rng, echo

__all__ = [
    "CascadeClickModel",
    "CLICK_MODELS",
    "CLICK_MODEL_NAMES",
    "CLICK_MODEL_TABLES",
    "cascade_clicks",
    "click_model",
    "parse_click_model",
    "select_click_model",
]


@dataclasses.dataclass(frozen=True)
class CascadeClickModel:
    """A cascade user: per relevance grade, the probability of a click and of stopping after it.

    Parameters
    ----------
    name : str
        ``"perfect"``, ``"navigational"``, ``"informational"`` or ``"custom"``.
    click, stop : sequence of float
        ``click[g]`` and ``stop[g]`` for grades ``g = 0 .. n_grades - 1``, each in ``[0, 1]``;
        stored as tuples of floats.

    Raises
    ------
    TypeError
        If ``name`` is not a non-empty string or ``click`` / ``stop`` is not a sequence of numbers.
    ValueError
        If a probability lies outside ``[0, 1]`` (or is not finite), or ``click`` and ``stop``
        differ in length or are empty.
    """

    name: str
    click: tuple[float, ...]
    stop: tuple[float, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"a click model's name must be a non-empty string, got {echo(self.name)}")
        for key in ("click", "stop"):
            values = getattr(self, key)
            if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, (Sequence, np.ndarray)):
                raise TypeError(f"click model {key!r} must be a sequence of probabilities (one per relevance grade), "
                                f"got {echo(values)}")
            # Frozen, so the normalised tuple goes in through object.__setattr__; tuples keep the
            # model hashable and its equality exact, which the choice of table relies on.
            object.__setattr__(self, key, tuple(check_probability(f"click model {key}[{grade}]", value)
                                                for grade, value in enumerate(values)))
        if len(self.click) != len(self.stop) or not self.click:
            raise ValueError(f"a click model needs as many stop as click probabilities (one per grade, at least one), "
                             f"got {len(self.click)} and {len(self.stop)}")

    @property
    def n_grades(self) -> int:
        """Number of relevance grades the model covers (labels ``0 .. n_grades - 1``)."""
        return len(self.click)

    def arrays(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The click and stop probabilities as float64 arrays (for the kernels)."""
        return np.array(self.click, dtype=np.float64), np.array(self.stop, dtype=np.float64)

    def simulate(self, grades: ArrayLike, rng: np.random.Generator, n_sessions: int = 1) -> NDArray[np.bool_]:
        """Clicks of ``n_sessions`` independent users on a list with relevance ``grades`` (top first).

        Returns a boolean array of shape ``(n_sessions, len(grades))``.
        """
        rng = check_rng(rng)
        n_sessions = check_integer("n_sessions", n_sessions, minimum=1)
        grades = _grades(grades, self.n_grades)
        click, stop = self.arrays()
        _compile()
        uniforms = rng.random((n_sessions, 2 * grades.size))
        clicks = np.zeros((n_sessions, grades.size), dtype=np.bool_)
        positions = np.arange(grades.size, dtype=np.int32)
        for session in range(n_sessions):
            cascade_clicks(positions, grades.size, grades, click, stop, uniforms[session], clicks[session])
        return clicks


#: The named click models on the five-grade scale 0-4 (see the module docstring for their source).
CLICK_MODELS: dict[str, CascadeClickModel] = {
    "perfect": CascadeClickModel("perfect", (0.0, 0.2, 0.4, 0.8, 1.0), (0.0, 0.0, 0.0, 0.0, 0.0)),
    "navigational": CascadeClickModel("navigational", (0.05, 0.3, 0.5, 0.7, 0.95), (0.2, 0.3, 0.5, 0.7, 0.9)),
    "informational": CascadeClickModel("informational", (0.4, 0.6, 0.7, 0.8, 0.9), (0.1, 0.2, 0.3, 0.4, 0.5)),
}
#: The named click models per grade scale, ``CLICK_MODEL_TABLES[n_grades][name]``, for 3 grades
#: (0-2, LETOR 4.0) and 5 grades (0-4, MSLR); ``CLICK_MODEL_TABLES[5]`` is :data:`CLICK_MODELS`.
CLICK_MODEL_TABLES: dict[int, dict[str, CascadeClickModel]] = {
    3: {
        "perfect": CascadeClickModel("perfect", (0.0, 0.5, 1.0), (0.0, 0.0, 0.0)),
        "navigational": CascadeClickModel("navigational", (0.05, 0.5, 0.95), (0.2, 0.5, 0.9)),
        "informational": CascadeClickModel("informational", (0.4, 0.7, 0.9), (0.1, 0.3, 0.5)),
    },
    5: CLICK_MODELS,
}
#: The names of the named click models (each exists in every table of ``CLICK_MODEL_TABLES``).
CLICK_MODEL_NAMES = ("perfect", "navigational", "informational")
_SCALE_WORDS = {3: "three-grade", 5: "five-grade"}


def click_model(spec: str | Mapping[str, Sequence[float]] | CascadeClickModel, *,
                grades: int | None = None) -> CascadeClickModel:
    """A :class:`~dueling_gym.problems.click_models.CascadeClickModel` from a name, a mapping or a model.

    Parameters
    ----------
    spec : str, mapping or CascadeClickModel
        ``"perfect"``, ``"navigational"`` or ``"informational"``, optionally with a grade scale
        (``"perfect:3"``, ``"perfect:5"``); a custom model ``{"click": [...], "stop": [...]}``
        (one probability per grade, in ``[0, 1]``); or a model, returned as is.
    grades : {3, 5}, optional
        The grade scale of a bare name.  Without it a bare name gives the five-grade table, the
        scale the models were first defined on; a ranker-evaluation problem instead chooses the
        table from its data (``select_click_model``).  Given with a scale in ``spec`` or with
        a custom model, it must agree with it.

    Returns
    -------
    CascadeClickModel

    Raises
    ------
    ValueError
        An unknown name, a scale without a table, a scale that disagrees with ``grades``, or
        custom probabilities that are out of ``[0, 1]`` or unequal in number.
    TypeError
        A spec of another type, or custom probabilities that are not sequences of numbers.
    """
    if grades is not None:
        grades = _check_scale("grades", grades)
    if isinstance(spec, str):
        name, scale = _split_name(spec)
        if scale is not None and grades is not None and scale != grades:
            raise ValueError(f"click model {echo(spec)} names the {scale}-grade table but grades={grades} was given")
        return CLICK_MODEL_TABLES[scale or grades or 5][name]
    model = _explicit_model(spec)
    if grades is not None and model.n_grades != grades:
        raise ValueError(f"the click model covers {model.n_grades} grades but grades={grades} was given")
    return model


def parse_click_model(spec: str | Mapping[str, Sequence[float]] | CascadeClickModel) -> str | CascadeClickModel:
    """Check a click-model spec before any data is read, without choosing a table yet.

    Parameters
    ----------
    spec : str, mapping or CascadeClickModel
        As :func:`click_model`.

    Returns
    -------
    str or CascadeClickModel
        The bare name (``"perfect"``) when the table is to be chosen from the data's grades;
        otherwise the model the spec fixes (a named table with its scale, or a custom model).
        Either is a valid ``spec`` again, and it identifies the request in cache keys.

    Raises
    ------
    ValueError, TypeError
        As :func:`click_model`.
    """
    if isinstance(spec, str):
        name, scale = _split_name(spec)
        return name if scale is None else CLICK_MODEL_TABLES[scale][name]
    return _explicit_model(spec)


def select_click_model(spec: str | Mapping[str, Sequence[float]] | CascadeClickModel,
                       top_grade: int) -> tuple[CascadeClickModel, str]:
    """The click model for data whose largest relevance grade is ``top_grade``, and how it was chosen.

    Parameters
    ----------
    spec : str, mapping or CascadeClickModel
        As :func:`click_model`.  A bare name takes the table of the data's scale: three grades
        when ``top_grade <= 2``, five when ``top_grade <= 4``.  A name with a scale, a custom
        model or a model is used as given.
    top_grade : int
        The largest relevance grade of the data (non-negative).

    Returns
    -------
    model : CascadeClickModel
    description : str
        The model, its table and how it was chosen, e.g. ``"perfect, three-grade table (click
        0.0 0.5 1.0, stop 0.0 0.0 0.0), chosen from the data's largest grade 2"``; recorded in a
        ranker-evaluation problem's provenance.

    Raises
    ------
    ValueError
        If the data has a grade beyond what the model covers: above 4 for a bare name, beyond
        the forced table for a name with a scale, beyond ``n_grades - 1`` for a custom model.
    TypeError
        As :func:`click_model`.
    """
    top_grade = check_integer("top_grade", top_grade, minimum=0)
    request = parse_click_model(spec)
    if isinstance(request, str):
        scale = next((scale for scale in sorted(CLICK_MODEL_TABLES) if top_grade < scale), None)
        if scale is None:
            raise ValueError(f"the data has relevance grade {top_grade} but the named click models cover grades 0..2 "
                             f"(three-grade table) or 0..4 (five-grade table); give a custom click model "
                             f"{{'click': [...], 'stop': [...]}} with one probability per grade 0..{top_grade}")
        model = CLICK_MODEL_TABLES[scale][request]
        return model, f"{_describe(model)}, chosen from the data's largest grade {top_grade}"
    model = request
    if top_grade >= model.n_grades:
        scale = _table_scale(model)
        if scale is None:
            advice = f"give a custom click model with one probability per grade 0..{top_grade}"
        else:
            advice = (f"use {model.name!r} to choose the table from the data's grades, or a custom click model"
                      if top_grade <= max(CLICK_MODEL_TABLES) else
                      f"give a custom click model with one probability per grade 0..{top_grade}")
        raise ValueError(f"the data has relevance grade {top_grade} but the {_describe(model, values=False)} "
                         f"covers grades 0..{model.n_grades - 1}; {advice}")
    return model, f"{_describe(model)}, given explicitly"


def _check_scale(name: str, value: Any) -> int:
    scale = check_integer(name, value)
    if scale not in CLICK_MODEL_TABLES:
        raise ValueError(f"{name} must name a grade scale with a click-model table, one of "
                         f"{sorted(CLICK_MODEL_TABLES)}, got {scale}")
    return scale


def _split_name(spec: str) -> tuple[str, int | None]:
    """``"perfect"`` -> ("perfect", None); ``"perfect:3"`` -> ("perfect", 3); anything else refused."""
    name, colon, scale_text = spec.partition(":")
    if name not in CLICK_MODEL_NAMES:
        scaled = ", ".join(f"{CLICK_MODEL_NAMES[0]}:{scale}" for scale in sorted(CLICK_MODEL_TABLES))
        raise ValueError(f"unknown click model {echo(spec)}; choose one of {list(CLICK_MODEL_NAMES)}, optionally "
                         f"with a grade scale ({scaled}), or give "
                         "{'click': [...], 'stop': [...]} with one probability per relevance grade")
    if not colon:
        return name, None
    if not (scale_text.isascii() and scale_text.isdigit()) or int(scale_text) not in CLICK_MODEL_TABLES:
        raise ValueError(f"click model {echo(spec)}: the grade scale after ':' must be one of "
                         f"{sorted(CLICK_MODEL_TABLES)} (the tables that exist), got {echo(scale_text)}")
    return name, int(scale_text)


def _table_scale(model: CascadeClickModel) -> int | None:
    """The scale of the named table ``model`` is, or None for any other model."""
    table = CLICK_MODEL_TABLES.get(model.n_grades, {})
    return model.n_grades if table.get(model.name) == model else None


def _describe(model: CascadeClickModel, *, values: bool = True) -> str:
    """``perfect, three-grade table (click ..., stop ...)``, or for messages ``'perfect' click model (...)``."""
    scale = _table_scale(model)
    # A model built by hand may carry any name; it is echoed capped, as every user-given value is.
    name = model.name if scale is not None else echo(model.name, quote=False)
    quoted = repr(model.name) if scale is not None else echo(model.name)
    if scale is not None:
        what = f"{_SCALE_WORDS[scale]} table"
        text = f"{name}, {what}" if values else f"{quoted} click model ({what})"
    else:
        text = f"{name}, {model.n_grades} grades" if values else f"{quoted} click model"
    if values:
        text += (f" (click {' '.join(map(str, model.click))}, stop {' '.join(map(str, model.stop))})")
    return text


def _explicit_model(spec: Any) -> CascadeClickModel:
    """A model or a ``{"click": [...], "stop": [...]}`` mapping as a model (named specs are handled apart)."""
    if isinstance(spec, CascadeClickModel):
        return spec
    if isinstance(spec, Mapping):
        if set(spec) != {"click", "stop"}:
            raise ValueError(f"a custom click model is a mapping with exactly the keys 'click' and 'stop', "
                             f"got {sorted(map(str, spec))}")
        probabilities = {}
        for key in ("click", "stop"):
            values = spec[key]
            if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
                raise TypeError(f"click model {key!r} must be a sequence of probabilities, got {echo(values)}")
            probabilities[key] = tuple(check_probability(f"click model {key}[{grade}]", value)
                                       for grade, value in enumerate(values))
        return CascadeClickModel("custom", probabilities["click"], probabilities["stop"])
    raise TypeError(f"click_model must be a name, a {{'click': [...], 'stop': [...]}} mapping or a CascadeClickModel, "
                    f"got {type(spec).__name__}")


def _grades(grades: ArrayLike, n_grades: int) -> NDArray[np.int32]:
    array = np.asarray(grades)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise TypeError(f"grades must be a 1-D array of integer relevance labels, got {grades!r}")
    if array.size and (array.min() < 0 or array.max() >= n_grades):
        raise ValueError(f"grades must lie in [0, {n_grades - 1}] for this click model, got {grades!r}")
    return array.astype(np.int32)


# ---------------------------------------------------------------------------------- kernel
# A plain function, compiled with Numba on first use (see jit_in_place).
def cascade_clicks(docs: NDArray[np.int32], shown: int, relevance: NDArray[np.int32], click: NDArray[np.float64],
                   stop: NDArray[np.float64], uniforms: NDArray[np.float64], clicks: NDArray[np.bool_]) -> int:
    """The cascade user on the first ``shown`` documents of a list: the kernel of every simulated click.

    A plain function, compiled with Numba on first use (by :meth:`CascadeClickModel.simulate`
    and by the comparison kernels of :mod:`dueling_gym.problems.interleaving`, which call it).

    Parameters
    ----------
    docs : ndarray of int32
        The shown documents, top first (ids into ``relevance``).
    shown : int
        How many of ``docs`` are shown.
    relevance : ndarray of int32
        The relevance grade of every document.
    click, stop : ndarray of float64
        ``click[g]`` and ``stop[g]`` per grade (see :class:`CascadeClickModel`).
    uniforms : ndarray of float64
        Uniforms in ``[0, 1)``; ``uniforms[2 r]`` and ``uniforms[2 r + 1]`` serve position ``r``
        (the click, then the stop after a click).
    clicks : ndarray of bool
        Receives the clicks of the first ``shown`` positions (overwritten).

    Returns
    -------
    int
        The number of clicks.
    """
    count = 0
    for position in range(shown):
        clicks[position] = False
    for position in range(shown):
        grade = relevance[docs[position]]
        if uniforms[2 * position] < click[grade]:
            clicks[position] = True
            count += 1
            if uniforms[2 * position + 1] < stop[grade]:
                break
    return count


_KERNEL_NAMES = ("cascade_clicks",)


def _compile() -> None:
    """Compile the kernel on first use (Numba's on-disk cache makes later processes fast)."""
    jit_in_place(globals(), _KERNEL_NAMES)
