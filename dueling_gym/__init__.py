"""dueling-gym: dueling bandits as first-class citizens of the RL ecosystem.

Importing the package registers the Gymnasium environments ``DuelingBandit-v0``,
``CopelandDuel-v0``, ``CombinatorialDuel-v0``, ``ReplayDuel-v0`` (a comparison log played
back) and ``RankerDuel-v0`` (rankers compared by interleaving with simulated clicks)::

    import gymnasium as gym
    import dueling_gym  # noqa: F401  (or: gym.register_envs(dueling_gym))

    env = gym.make("CopelandDuel-v0", preferences="sushi")

``gym.make("dueling_gym:CopelandDuel-v0")`` imports the package itself.
"""

from __future__ import annotations

import os as _os
import sys as _sys


def _interrupted_while_starting(signum: int, frame: object) -> None:
    """SIGINT handler of the ``dueling-gym`` console script until its ``main`` runs: one line, exit 130.

    The process ends at once (``os._exit``) rather than by raising ``SystemExit``: the signal
    lands inside whatever import is running, and an import that catches ``BaseException`` (to
    fall back on something) would swallow the exception and let the command run on.  Nothing
    has been written yet that needs flushing or cleaning up: the command itself has not started.
    """
    _os.write(2, b"dueling-gym: interrupted\n")
    _os._exit(130)


# The console script imports this package (and Gymnasium, NumPy, ...) before its main() can catch
# a Ctrl-C, which would print the traceback of whatever import it stopped; so the script's own
# process exits with one line instead, and main() gives SIGINT back to Python first thing.
if _os.path.basename((getattr(_sys, "argv", None) or [""])[0]) in ("dueling-gym", "dueling-gym.exe",
                                                                    "dueling-gym-script.py"):
    import signal as _signal

    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _interrupted_while_starting)

from importlib.metadata import PackageNotFoundError, version  # noqa: E402

import gymnasium as gym  # noqa: E402

try:
    __version__ = version("dueling-gym")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+unknown"

__all__ = ["PreferenceMatrix", "ProblemSampler", "load_problem", "list_problems", "register_envs", "ENV_IDS"]

DEFAULT_HORIZON = 10_000

#: Each environment's Gymnasium registration, by id: a new environment is one entry here and its
#: module (entry points are strings, so ``import dueling_gym`` imports no environment module).
#: ``kwargs`` name the default problem, so ``gym.spec(env_id).kwargs`` says which one ``make``
#: gives; an argument given to ``make`` for the other source of problems replaces it.  The entry
#: points build the classes and refuse an unsupported ``render_mode`` (``"human"``) at ``make``.
_ENVIRONMENTS: dict[str, dict[str, object]] = {
    "DuelingBandit-v0": dict(
        entry_point="dueling_gym.envs._entry_points:dueling_bandit",
        vector_entry_point="dueling_gym.envs.vector:DuelingBanditVectorEnv",
        max_episode_steps=DEFAULT_HORIZON,
        kwargs={"problem_sampler": {"generator": "utility_based", "n_arms": 8, "options": {}}},
    ),
    "CopelandDuel-v0": dict(
        entry_point="dueling_gym.envs._entry_points:copeland_duel",
        vector_entry_point="dueling_gym.envs.vector:CopelandDuelVectorEnv",
        max_episode_steps=DEFAULT_HORIZON,
        kwargs={"preferences": "multisol"},
    ),
    "CombinatorialDuel-v0": dict(
        entry_point="dueling_gym.envs._entry_points:combinatorial_duel",
        max_episode_steps=DEFAULT_HORIZON,
        kwargs={"problem": "five_edge"},
    ),
    "ReplayDuel-v0": dict(
        entry_point="dueling_gym.envs._entry_points:replay_duel",
        max_episode_steps=DEFAULT_HORIZON,
        kwargs={"preferences": "mslr5-condorcet-synthetic-log"},
    ),
    "RankerDuel-v0": dict(
        entry_point="dueling_gym.envs._entry_points:ranker_duel",
        max_episode_steps=DEFAULT_HORIZON,
        kwargs={"data": None, "rankers": "features", "interleaving": "team_draft", "click_model": "perfect"},
    ),
}

#: The environments registered by ``import dueling_gym``.
ENV_IDS = tuple(_ENVIRONMENTS)


def register_envs() -> None:
    """Register the environments with Gymnasium (idempotent; called on import)."""
    registry = gym.envs.registration.registry
    for env_id, spec in _ENVIRONMENTS.items():
        if env_id not in registry:
            gym.register(id=env_id, **spec)


register_envs()


class _NumbaCacheGuardFinder:
    """Finds nothing but ``numba.core.caching``, whose loading it hands to :mod:`dueling_gym.numba_cache`.

    A damaged file of Numba's on-disk cache is then discarded and compiled again (with a warning)
    rather than failing every call of its function.  The guard is installed when Numba is
    imported, so that ``import dueling_gym`` imports (and compiles) nothing more.
    """

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> object:
        if fullname != "numba.core.caching":
            return None
        from dueling_gym.numba_cache import guarded_spec

        return guarded_spec(self, fullname, path, target)


if "numba.core.caching" in _sys.modules:
    from dueling_gym.numba_cache import install as _install_numba_cache_guard

    _install_numba_cache_guard(_sys.modules["numba.core.caching"])
elif not any(type(finder).__name__ == "_NumbaCacheGuardFinder" for finder in _sys.meta_path):
    _sys.meta_path.insert(0, _NumbaCacheGuardFinder())

# The problem API is imported on first use: ``import dueling_gym`` only registers the
# environments, so that it costs about as much as importing Gymnasium.
_LAZY = {"PreferenceMatrix", "ProblemSampler", "load_problem", "list_problems"}


def __getattr__(name: str):
    if name in _LAZY:
        from dueling_gym import problems

        value = getattr(problems, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
