"""The shipped weight files of the ``learned`` agent and which of them a run plays.

Every file lies in ``agents/data/`` (``agents/data/README.md`` records the command and seed that made
each one, and the validation that chose it).  A run of ``make_agent("learned", n_arms=K)`` plays, in
turn: an opening (:func:`shipped_opening_path`, for :func:`opening_length` duels), the size's policy
(:func:`shipped_policy_path`), with 5 arms the cycle policy while the counts show a top cycle
(:func:`shipped_cycle_path`), and from duel :data:`LATE_FROM` + 1 a late policy
(:func:`shipped_late_path`).  The agent itself, which loads and plays them, is
:class:`~dueling_gym.agents.learned.LearnedAgent`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dueling_gym.validation import check_n_arms

__all__ = ["DATA_DIRECTORY", "GENERAL_POLICY", "FIVE_ARM_POLICY", "LARGE_POLICY_FROM", "LARGE_POLICY",
           "OPENING_POLICY", "OPENING_DUELS", "LONG_OPENING_FROM", "LONG_OPENING_DUELS", "LONG_OPENING_POLICY",
           "FIVE_ARM_OPENING_POLICY", "LATE_POLICY", "SMALL_LATE_POLICY", "SMALL_LATE_POLICY_UNTIL",
           "LARGE_LATE_POLICY", "LARGE_LATE_POLICY_UNTIL", "LATE_FROM", "CYCLE_POLICY", "AS_SHIPPED",
           "shipped_policies", "shipped_policy_path", "opening_length", "shipped_opening_path",
           "shipped_late_path", "shipped_cycle_path", "own_policy_path", "policy_sizes"]

#: Where the shipped weights live (``learned_k{K}.npz``).
DATA_DIRECTORY = Path(__file__).resolve().parent / "data"
#: The policy played for every K below :data:`~dueling_gym.agents.learned_files.LARGE_POLICY_FROM` without
#: a file of its own.  The network's weights do not depend on K; of the two shipped policies, the
#: K = 5 one had the lower regret relative to the best reference agent on validation problems with
#: 4, 6 and 16 arms, on average over the sizes (``agents/data/README.md``).
GENERAL_POLICY = DATA_DIRECTORY / "learned_k5.npz"
#: The size policy played with exactly 5 arms, the mean of the weights of ``learned_k5.npz`` (the
#: general policy) and ``learned_k4.npz`` (trained from it on 4 arms).  On validation problems lower
#: than ``learned_k5.npz`` on ``utility_based`` at T = 1000, higher nowhere at 10^4 (``agents/data/README.md``).
FIVE_ARM_POLICY = DATA_DIRECTORY / "learned_k5_average.npz"
#: From this many arms on, a K without a file of its own plays
#: :data:`~dueling_gym.agents.learned_files.LARGE_POLICY` instead of
#: :data:`~dueling_gym.agents.learned_files.GENERAL_POLICY`: on validation problems with 12, 16 and 24 arms
#: (never the evaluation's) the K = 8 weights had lower regret at T = 100 and 1000 than the K = 5
#: weights, significantly so at 1000 on at least one family of each size, and were tied with them at
#: 10^4; with 10 arms neither was ahead at 1000 (``agents/data/README.md``).
LARGE_POLICY_FROM = 12
#: The policy of :data:`~dueling_gym.agents.learned_files.LARGE_POLICY_FROM` arms and more (the K = 8 file's weights).
LARGE_POLICY = DATA_DIRECTORY / "learned_k8.npz"
#: The policy the agent plays below :data:`~dueling_gym.agents.learned_files.LONG_OPENING_FROM` arms for its
#: first duels (:func:`~dueling_gym.agents.learned_files.opening_length`) before the size's policy takes over
#: (:data:`~dueling_gym.agents.learned_files.LONG_OPENING_POLICY` from there on): trained
#: from the K = 5 weights on a mixture of 4, 5, 8 and 16 arms with its fitness read at 100 and 1000
#: duels only, where the size policies' training read 1000 alone (``agents/data/README.md``).
OPENING_POLICY = DATA_DIRECTORY / "learned_opening.npz"
#: The number of duels the opening policy plays below
#: :data:`~dueling_gym.agents.learned_files.LONG_OPENING_FROM` arms, the shorter horizon it was trained for.
#: It plays no longer there because on its own it was no better at 1000 duels and once worse at
#: 10^4 on validation problems; as an opening of 100 duels it was lower at T = 100 on every
#: validation size and family and tied at 1000 and 10^4, and an opening of 50 duels gained a third
#: as much (``agents/data/README.md``).
OPENING_DUELS = 100
#: From this many arms on, the opening plays :data:`~dueling_gym.agents.learned_files.LONG_OPENING_DUELS`
#: duels: on validation problems with 16 and 24 arms an opening of 1000 duels had lower regret at
#: T = 1000 than one of 100 on at least one family and was nowhere higher at 1000 or 10^4; with 12
#: arms neither was ahead (``agents/data/README.md``).
LONG_OPENING_FROM = 16
#: The opening's length from :data:`~dueling_gym.agents.learned_files.LONG_OPENING_FROM` arms on: the longer
#: horizon it was trained for.
LONG_OPENING_DUELS = 1000
#: The opening of :data:`~dueling_gym.agents.learned_files.LONG_OPENING_FROM` arms and more: the weights of
#: :data:`~dueling_gym.agents.learned_files.OPENING_POLICY` trained further on 16 and 24 arms, last on runs
#: in which the K = 8 weights take over after its 1000 duels, as the agent plays it, with the fitness
#: read at 100, 1000 and 10^4 duels.  On validation problems with 16 and 24 arms it had lower regret
#: than :data:`~dueling_gym.agents.learned_files.OPENING_POLICY` at T = 100 and 1000 on every family and was
#: tied with it at 10^4 (``agents/data/README.md``).
LONG_OPENING_POLICY = DATA_DIRECTORY / "learned_opening_large.npz"
#: The opening played with exactly 5 arms, the weights of
#: :data:`~dueling_gym.agents.learned_files.OPENING_POLICY` trained further on 4, 5, 6 and 8 arms with a
#: fourth family, three Copeland winners in a cycle, handing over to each size's policy after 100
#: duels as the agent plays it, with the fitness read at 100, 500 and 1000 duels.  With 4 and 8 arms
#: it cost regret at 1000 duels on validation problems; with 5 it was lower at T = 100 on three of
#: the four families and higher on none at 100, 1000 or 10^4 (``agents/data/README.md``), so only 5
#: arms play it.
FIVE_ARM_OPENING_POLICY = DATA_DIRECTORY / "learned_opening_k5.npz"
#: The weights that choose every duel after the
#: :data:`~dueling_gym.agents.learned_files.LATE_FROM`-th from
#: :data:`~dueling_gym.agents.learned_files.SMALL_LATE_POLICY_UNTIL` + 1 to
#: :data:`~dueling_gym.agents.learned_files.LARGE_POLICY_FROM` − 1 arms, after the opening and the size's
#: policy, having read every duel they played (the first late policy, trained for runs of 10^4
#: duels on 4, 5 and 8 arms, trained further on 4, 5, 6 and 8 arms for the regret extrapolated to
#: 10^5 duels; on validation problems with 4 to 8 arms lower at 10^4 than the first on three
#: cyclic Copeland winners, tied elsewhere; ``agents/data/README.md``).  The first lies in the
#: source tree's ``training-history/es_late_k4_5_8.npz`` and plays with ``late=`` naming it.
LATE_POLICY = DATA_DIRECTORY / "learned_late.npz"
#: The weights that choose every duel after the 1000th with at most
#: :data:`~dueling_gym.agents.learned_files.SMALL_LATE_POLICY_UNTIL` arms: those of
#: :data:`~dueling_gym.agents.learned_files.LATE_POLICY` trained one round further the same way.  On
#: validation problems with 4 and 5 arms lower at 10^4 than it on three cyclic Copeland winners and
#: on ``no_condorcet_winner`` with 4 arms, tied elsewhere; with 6 arms higher, so larger sizes keep
#: :data:`~dueling_gym.agents.learned_files.LATE_POLICY` (``agents/data/README.md``).
SMALL_LATE_POLICY = DATA_DIRECTORY / "learned_late_small.npz"
#: The largest number of arms that plays :data:`~dueling_gym.agents.learned_files.SMALL_LATE_POLICY`.
SMALL_LATE_POLICY_UNTIL = 5
#: The weights that choose every duel after the 1000th with
#: :data:`~dueling_gym.agents.learned_files.LARGE_POLICY_FROM` to
#: :data:`~dueling_gym.agents.learned_files.LARGE_LATE_POLICY_UNTIL` arms, those of the first late policy
#: (before :data:`~dueling_gym.agents.learned_files.LATE_POLICY`) trained further on 12 and 16 arms, where the K = 8
#: weights and, from 16 arms, the long opening play before them.  On validation problems with 12 to
#: 16 arms lower at 10^4 than the agent without it, or tied; with 24 arms higher
#: (``agents/data/README.md``).
LARGE_LATE_POLICY = DATA_DIRECTORY / "learned_late_large.npz"
#: The largest number of arms that plays :data:`~dueling_gym.agents.learned_files.LARGE_LATE_POLICY`; above
#: it no late policy is played.
LARGE_LATE_POLICY_UNTIL = 16
#: How many duels the opening and the size's policy play before the late policy takes over.
LATE_FROM = 1000
#: The weights that choose with 5 arms, after the opening and up to the
#: :data:`~dueling_gym.agents.learned_files.LATE_FROM`-th duel, while the counts show a top cycle (then the
#: size's policy chooses there instead of the late policy): the 5-arm size policy trained further
#: with three cyclic Copeland winners in the mix.  Played in top cycles only, it was lower on that
#: family at 1000 and 10^4 duels on validation problems and within 5% elsewhere at 1000
#: (``agents/data/README.md``).
CYCLE_POLICY = DATA_DIRECTORY / "learned_cycle_k5.npz"
#: ``opening`` and ``late`` value meaning "the shipped file with the shipped policies, none with a policy file".
AS_SHIPPED = "shipped"


def shipped_policies() -> list[int]:
    """Numbers of arms ``K`` with a policy file of their own (``learned_k{K}.npz``); every other
    ``K >= 2`` plays another size's weights (:func:`shipped_policy_path`)."""
    found = []
    for path in DATA_DIRECTORY.glob("learned_k*.npz"):
        digits = path.stem[len("learned_k"):]
        if digits.isdigit():
            found.append(int(digits))
    return sorted(found)


def shipped_policy_path(n_arms: int) -> Path:
    """The shipped policy file the agent plays for ``n_arms`` arms: with 5 arms
    :data:`~dueling_gym.agents.learned_files.FIVE_ARM_POLICY`, else that size's own file when one is shipped, else :data:`~dueling_gym.agents.learned_files.LARGE_POLICY` from
    :data:`~dueling_gym.agents.learned_files.LARGE_POLICY_FROM` arms on, else the general one."""
    if n_arms == 5 and FIVE_ARM_POLICY.is_file():
        return FIVE_ARM_POLICY
    own = own_policy_path(n_arms)
    if own.is_file():
        return own
    return LARGE_POLICY if n_arms >= LARGE_POLICY_FROM else GENERAL_POLICY


def opening_length(n_arms: int) -> int:
    """How many duels the shipped opening plays with ``n_arms`` arms (the agent's default
    ``opening_duels``): :data:`~dueling_gym.agents.learned_files.OPENING_DUELS`, or
    :data:`~dueling_gym.agents.learned_files.LONG_OPENING_DUELS` from
    :data:`~dueling_gym.agents.learned_files.LONG_OPENING_FROM` arms on."""
    return LONG_OPENING_DUELS if check_n_arms(n_arms) >= LONG_OPENING_FROM else OPENING_DUELS


def shipped_opening_path(n_arms: int) -> Path:
    """The shipped opening the agent plays with ``n_arms`` arms:
    :data:`~dueling_gym.agents.learned_files.FIVE_ARM_OPENING_POLICY` with 5 arms,
    :data:`~dueling_gym.agents.learned_files.LONG_OPENING_POLICY` from
    :data:`~dueling_gym.agents.learned_files.LONG_OPENING_FROM` arms on, else
    :data:`~dueling_gym.agents.learned_files.OPENING_POLICY`."""
    n_arms = check_n_arms(n_arms)
    if n_arms == 5:
        return FIVE_ARM_OPENING_POLICY
    return LONG_OPENING_POLICY if n_arms >= LONG_OPENING_FROM else OPENING_POLICY


def shipped_late_path(n_arms: int) -> Path | None:
    """The shipped late policy the agent plays with ``n_arms`` arms, or None where none is shipped:
    :data:`~dueling_gym.agents.learned_files.SMALL_LATE_POLICY` up to
    :data:`~dueling_gym.agents.learned_files.SMALL_LATE_POLICY_UNTIL` arms,
    :data:`~dueling_gym.agents.learned_files.LATE_POLICY` from there below
    :data:`~dueling_gym.agents.learned_files.LARGE_POLICY_FROM` arms,
    :data:`~dueling_gym.agents.learned_files.LARGE_LATE_POLICY` from there up to
    :data:`~dueling_gym.agents.learned_files.LARGE_LATE_POLICY_UNTIL` arms, none above (and none whose file
    the package lacks)."""
    n_arms = check_n_arms(n_arms)
    if n_arms <= SMALL_LATE_POLICY_UNTIL:
        path = SMALL_LATE_POLICY
    elif n_arms < LARGE_POLICY_FROM:
        path = LATE_POLICY
    else:
        path = LARGE_LATE_POLICY if n_arms <= LARGE_LATE_POLICY_UNTIL else None
    return path if path is not None and path.is_file() else None


def shipped_cycle_path(n_arms: int) -> Path | None:
    """The shipped cycle policy the agent plays with ``n_arms`` arms:
    :data:`~dueling_gym.agents.learned_files.CYCLE_POLICY` with 5 arms, none with other sizes."""
    n_arms = check_n_arms(n_arms)
    return CYCLE_POLICY if n_arms == 5 and CYCLE_POLICY.is_file() else None


def own_policy_path(n_arms: int) -> Path:
    """Where the policy file of ``n_arms`` arms would lie (it may not be shipped)."""
    return DATA_DIRECTORY / f"learned_k{n_arms}.npz"


def policy_sizes(metadata: dict[str, Any]) -> list[int] | None:
    """The numbers of arms a policy file plays, from its metadata: None (every size) for a policy
    trained on a mixture of sizes, else the one size it was trained and validated for."""
    trained = metadata.get("config", {}).get("n_arms", metadata["n_arms"])
    return None if isinstance(trained, list) else [int(metadata["n_arms"])]
