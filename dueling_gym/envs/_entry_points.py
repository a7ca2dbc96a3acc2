"""The callables that ``gymnasium.make`` calls to build the registered environments.

Each builds its environment class with the given arguments.  They exist for one reason:
``gymnasium.make`` reads the ``render_modes`` of an entry point that is a class and, for
``render_mode="human"``, quietly builds an ``"rgb_array"`` environment inside a ``HumanRendering``
wrapper, which needs pygame (not a dependency) and fails only at the first ``reset``.  These
callables have no ``metadata``, so the mode reaches them: ``"human"`` is refused at ``make`` in
one ``ValueError`` naming the supported modes, and a ``"<mode>_list"`` mode is served by
Gymnasium's ``RenderCollection`` as ``gymnasium.make`` would.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable

import gymnasium as gym

__all__ = ["dueling_bandit", "copeland_duel", "combinatorial_duel", "replay_duel", "ranker_duel", "build"]


def build(class_path: str, env_id: str, **kwargs: Any) -> gym.Env:
    """Build the environment class ``"module:Class"`` with ``kwargs``, checking ``render_mode`` first.

    Raises
    ------
    ValueError
        If ``render_mode`` is not one of the class's render modes, their ``"_list"`` forms or ``None``.
    """
    module, name = class_path.split(":")
    env_class = getattr(import_module(module), name)
    modes = list(env_class.metadata["render_modes"])
    give_way = getattr(env_class, "registered_default_gives_way", None)
    if give_way is not None:  # the registered default problem yields to the other source given to make
        kwargs = give_way(kwargs)
    render_mode = kwargs.get("render_mode")
    if render_mode is None or render_mode in modes:
        return env_class(**kwargs)
    if isinstance(render_mode, str) and render_mode.endswith("_list") and render_mode[:-len("_list")] in modes:
        return gym.wrappers.RenderCollection(env_class(**{**kwargs, "render_mode": render_mode[:-len("_list")]}))
    raise ValueError(f"{env_id} has no render_mode {render_mode!r}: choose one of {modes} (or a '_list' form of "
                     "one, or None); it draws no window, so record 'rgb_array' frames (RecordVideo) or print 'ansi'")


def _entry_point(name: str, class_path: str, env_id: str) -> Callable[..., gym.Env]:
    """The module-level callable ``name`` that builds ``env_id``."""
    def make(**kwargs: Any) -> gym.Env:
        return build(class_path, env_id, **kwargs)

    make.__doc__ = f"Build ``{env_id}`` (:class:`{class_path.replace(':', '.')}`) for ``gymnasium.make``."
    make.__qualname__ = make.__name__ = name
    return make


dueling_bandit = _entry_point("dueling_bandit", "dueling_gym.envs.dueling_bandit:DuelingBanditEnv", "DuelingBandit-v0")
copeland_duel = _entry_point("copeland_duel", "dueling_gym.envs.copeland_duel:CopelandDuelEnv", "CopelandDuel-v0")
combinatorial_duel = _entry_point("combinatorial_duel", "dueling_gym.envs.combinatorial_duel:CombinatorialDuelEnv",
                                  "CombinatorialDuel-v0")
replay_duel = _entry_point("replay_duel", "dueling_gym.envs.comparison_replay:ComparisonReplayEnv", "ReplayDuel-v0")
ranker_duel = _entry_point("ranker_duel", "dueling_gym.envs.ranker_duel:RankerDuelEnv", "RankerDuel-v0")
