"""Multi-agent (PettingZoo) environments.

* :mod:`~dueling_gym.multiagent.sparring_v0` -- Sparring self-play: two players each pick one
  arm of a duel over any K-armed problem, zero-sum reward from the outcome.

Follows PettingZoo's module convention::

    from dueling_gym.multiagent import sparring_v0

    env = sparring_v0.parallel_env(preferences="sushi")   # or .env() for the AEC form

Needs PettingZoo: ``pip install "dueling-gym[multiagent]"``.
"""

try:
    import pettingzoo  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "dueling_gym.multiagent needs PettingZoo; install it with: pip install 'dueling-gym[multiagent]'"
    ) from error

from dueling_gym.multiagent import sparring_v0
from dueling_gym.multiagent.sparring_v0 import SparringAECEnv, SparringParallelEnv

__all__ = ["sparring_v0", "SparringParallelEnv", "SparringAECEnv"]
