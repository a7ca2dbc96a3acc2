"""Helpers shared by the wrappers: recognising a K-armed dueling environment."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = ["pair_action_arms", "dueling_arms"]


def pair_action_arms(env: Any, wrapper: str) -> int:
    """``K`` when ``env``'s action space is ``MultiDiscrete([K, K])`` (a duel); TypeError otherwise."""
    space = env.action_space
    if isinstance(space, spaces.MultiDiscrete) and space.shape == (2,) and space.nvec[0] == space.nvec[1] >= 2:
        return int(space.nvec[0])
    raise TypeError(
        f"{wrapper} wraps a K-armed dueling environment whose action space is MultiDiscrete([K, K]) "
        f"(DuelingBandit-v0, CopelandDuel-v0); got action space {space}"
    )


def dueling_arms(env: Any, wrapper: str) -> int:
    """``K`` of a K-armed dueling environment, possibly behind action wrappers (``n_arms`` attribute)."""
    space = env.action_space
    if isinstance(space, spaces.MultiDiscrete) and space.shape == (2,) and space.nvec[0] == space.nvec[1] >= 2:
        return int(space.nvec[0])
    n_arms = getattr(env.unwrapped, "n_arms", None)
    if isinstance(n_arms, (int, np.integer)) and not isinstance(n_arms, bool) and n_arms >= 2:
        return int(n_arms)
    raise TypeError(
        f"{wrapper} wraps a K-armed dueling environment (action space MultiDiscrete([K, K]) or an "
        f"unwrapped env with an n_arms attribute); got action space {space}"
    )
