"""The duel engine (``dueling_gym.envs.DuelEngine`` / ``BatchDuelEngine``) and its compiled twin.

Every environment and the simulator's Python loop play their duels through the engine;
``simulate``'s fused loop is a compiled copy of it.  These tests check that the two are equal duel
for duel (the same random stream, the same outcomes, the same regret after every duel) and that
the environments are the engine plus bookkeeping.
"""

from __future__ import annotations

import numpy as np
import pytest

from dueling_gym.agents import make_agent
from dueling_gym.envs import UNIFORM_BLOCK, BatchDuelEngine, DuelEngine
from dueling_gym.envs.copeland_duel import CopelandDuelEnv
from dueling_gym.experiments import derive_seeds, simulate
from dueling_gym.problems import ProblemSampler, load_problem

SAMPLED = ProblemSampler("no_condorcet_winner", n_arms=7)(np.random.default_rng(123))
PROBLEMS = {"sushi": load_problem("sushi"), "multisol": load_problem("multisol"), "cyclic4": load_problem("cyclic4"),
            "sampled-7": SAMPLED}
AGENTS = ("rucb", "rmed1", "ccb", "dts", "sparring_ucb1")


# ------------------------------------------------------------------ fused loop == engine, duel for duel
@pytest.mark.parametrize("agent_name", AGENTS)
@pytest.mark.parametrize("problem_name", sorted(PROBLEMS))
def test_compiled_loop_equals_the_engine_duel_for_duel(agent_name, problem_name):
    problem = PROBLEMS[problem_name]
    horizon = 1500
    every_duel = np.arange(1, horizon + 1)
    for seed in (0, 1, 2):
        runs = [
            simulate(make_agent(agent_name, problem.n_arms), problem, horizon, seed=seed, record_duels=True,
                     checkpoints=every_duel, fused=fused)
            for fused in (True, False)
        ]
        compiled, engine = runs
        assert compiled.fused and not engine.fused
        np.testing.assert_array_equal(compiled.duels, engine.duels)
        np.testing.assert_array_equal(compiled.outcomes, engine.outcomes)
        np.testing.assert_array_equal(compiled.recommendations, engine.recommendations)
        assert compiled.cumulative_regret.keys() == engine.cumulative_regret.keys()
        for notion in compiled.cumulative_regret:  # regret after every duel, bit for bit
            assert compiled.cumulative_regret[notion].tobytes() == engine.cumulative_regret[notion].tobytes()


@pytest.mark.parametrize("problem_name", sorted(PROBLEMS))
def test_engine_replays_a_compiled_run_from_the_same_stream(problem_name):
    """Drive a bare engine with the duels of a compiled run: same outcomes, same totals."""
    problem = PROBLEMS[problem_name]
    horizon = 2 * UNIFORM_BLOCK + 17  # crosses two uniform blocks
    run = simulate(make_agent("rucb", problem.n_arms), problem, horizon, seed=5, record_duels=True,
                   checkpoints=[horizon])
    notions = problem.defined_regret_notions
    engine = DuelEngine(notions)
    engine.load(problem.duel_table(notions))
    engine.reset(np.random.default_rng(derive_seeds(5)[0]))
    outcomes = [engine.duel(first * problem.n_arms + second)[0] for first, second in run.duels.tolist()]
    assert outcomes == run.outcomes.tolist()
    assert engine.t == horizon
    assert engine.cumulative == [run.cumulative_regret[notion][-1] for notion in notions]


# ------------------------------------------------------------------ the engine itself
def test_uniform_blocks_give_the_stream_of_single_draws():
    table = np.array([[0.3, 1.0], [0.8, 0.25], [0.5, 0.0]])
    engine = DuelEngine(("r",))
    engine.load(table)
    engine.reset(np.random.default_rng(9))
    rows = np.random.default_rng(1).integers(0, 3, size=UNIFORM_BLOCK + 100).tolist()
    outcomes = [engine.duel(row)[0] for row in rows]
    reference = np.random.default_rng(9)
    assert outcomes == [reference.random() < table[row, 0] for row in rows]
    total = 0.0
    for row in rows:
        total += table[row, 1]
    assert engine.cumulative == [total] and engine.t == len(rows)
    assert engine.counts.tolist() == np.bincount(rows, minlength=3).tolist()
    assert engine.first_wins.tolist() == [sum(o for r, o in zip(rows, outcomes) if r == k) for k in range(3)]


def test_reset_and_load():
    engine = DuelEngine(("a", "b"))
    engine.load(np.array([[1.0, 0.5, 2.0], [0.0, 0.0, 0.0]]))
    engine.reset(np.random.default_rng(0))
    assert engine.duel(0) == (True, (0.5, 2.0)) and engine.duel(1) == (False, (0.0, 0.0))
    kept = engine.cumulative
    engine.duel(0)
    assert kept == [0.5, 2.0] and engine.cumulative == [1.0, 4.0]  # totals are replaced, not mutated
    assert engine.regrets(0) == (0.5, 2.0)
    engine.reset(np.random.default_rng(0))
    assert engine.t == 0 and engine.cumulative == [0.0, 0.0] and engine.counts.tolist() == [0, 0]
    with pytest.raises(ValueError, match="shape"):
        engine.load(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="Generator"):
        engine.reset(np.random.RandomState(0))


@pytest.mark.parametrize("per_env_tables", [False, True])
def test_batch_engine_with_one_run_equals_the_engine(per_env_tables):
    problem = PROBLEMS["sushi"]
    notions = problem.defined_regret_notions
    table = problem.duel_table(notions)
    single = DuelEngine(notions)
    single.load(table)
    single.reset(np.random.default_rng(4))
    batch = BatchDuelEngine(1, table.shape[0], notions, per_env_tables=per_env_tables, track_counts=True)
    batch.load(table, 0 if per_env_tables else None)
    batch.reset(np.random.default_rng(4))
    rows = np.random.default_rng(2).integers(0, table.shape[0], size=3000)
    for row in rows.tolist():
        won, regrets = single.duel(row)
        batch_rows = np.array([row], dtype=np.int64)
        batch_won, batch_regrets = batch.draw(batch_rows)
        cumulative = batch.accumulate(batch_rows, batch_won, batch_regrets)
        assert batch_won[0] == won and tuple(batch_regrets[0]) == regrets
        assert cumulative[0].tolist() == single.cumulative
    assert batch.counts[0].tolist() == single.counts.tolist()
    assert batch.first_wins[0].tolist() == single.first_wins.tolist()
    assert batch.t.tolist() == [single.t]


def test_batch_engine_tables_and_restart():
    batch = BatchDuelEngine(3, 2, ("r",), per_env_tables=True, track_counts=True)
    for env_index, p in enumerate((0.0, 1.0, 0.0)):
        batch.load(np.array([[p, 1.0], [1.0, 2.0]]), env_index)
    batch.reset(np.random.default_rng(0))
    rows = np.array([0, 0, 1], dtype=np.int64)
    won, regrets = batch.draw(rows)
    assert won.tolist() == [False, True, True] and regrets[:, 0].tolist() == [1.0, 1.0, 2.0]
    assert rows.tolist() == [0, 0, 1]  # the caller's rows are left alone
    batch.accumulate(rows, won, regrets)
    won, regrets = batch.draw(rows)
    restarting = np.array([False, True, False])
    batch.restart(restarting, won, regrets)
    cumulative = batch.accumulate(rows, won, regrets, ~restarting)
    assert cumulative[:, 0].tolist() == [2.0, 0.0, 4.0] and batch.t.tolist() == [2, 0, 2]
    assert batch.counts.tolist() == [[2, 0], [0, 0], [0, 2]]
    with pytest.raises(ValueError, match="env_index"):
        batch.load(np.array([[0.5, 0.0], [0.5, 0.0]]))
    with pytest.raises(ValueError, match="rows"):
        batch.load(np.array([[0.5, 0.0]]), 0)


# ------------------------------------------------------------------ the environments are the engine
def test_environment_steps_are_engine_duels():
    problem = PROBLEMS["multisol"]
    env = CopelandDuelEnv(problem)
    env.reset(seed=3)
    notions = env.regret_notions
    engine = DuelEngine(notions)
    engine.load(problem.duel_table(notions))
    engine.reset(np.random.default_rng(3))
    rng = np.random.default_rng(0)
    for _ in range(5000):
        first, second = rng.integers(0, 5, size=2).tolist()
        observation, reward, _, _, info = env.step((first, second))
        won, regrets = engine.duel(first * 5 + second)
        assert observation == won and reward == -regrets[notions.index("copeland_komiyama")]
        assert info["cumulative_regret"] == dict(zip(notions, engine.cumulative)) and info["t"] == engine.t
    counts = engine.counts.reshape(5, 5)
    first_wins = engine.first_wins.reshape(5, 5)
    np.testing.assert_array_equal(env.win_counts, first_wins + (counts - first_wins).T)


def test_one_notion_fast_path_equals_the_general_path():
    table = np.array([[0.3, 0.125, 0.125], [0.9, 1.0 / 3.0, 1.0 / 3.0]])
    one, two = DuelEngine(("a",)), DuelEngine(("a", "b"))
    one.load(table[:, :2])
    two.load(table)
    one.reset(np.random.default_rng(8))
    two.reset(np.random.default_rng(8))
    for row in np.random.default_rng(0).integers(0, 2, size=500).tolist():
        (won_one, regrets_one), (won_two, regrets_two) = one.duel(row), two.duel(row)
        assert won_one == won_two and regrets_one == regrets_two[:1]
        assert one.cumulative == two.cumulative[:1] and one.t == two.t
    with pytest.raises(ValueError, match="notion"):
        DuelEngine(())


@pytest.mark.parametrize("notions", [("copeland",), ("copeland", "borda", "condorcet")])
def test_large_tables_converted_row_by_row_play_the_same_duels(monkeypatch, notions):
    # Tables above LIST_ROWS rows are converted lazily (a 2000-armed problem has 4M rows); the
    # duels, counts and totals must be those of the list path.
    import dueling_gym.envs._duels as duels

    rng = np.random.default_rng(3)
    table = np.column_stack([rng.random(400), rng.random((400, len(notions)))])
    rows = rng.integers(0, 400, size=5000)
    played = {}
    for limit in (1 << 16, 0):
        monkeypatch.setattr(duels, "LIST_ROWS", limit)
        engine = DuelEngine(notions)
        engine.load(table)
        engine.reset(np.random.default_rng(11))
        outcomes = [engine.duel(int(row)) for row in rows]
        played[limit] = (outcomes, engine.counts, engine.first_wins, engine.cumulative, engine.regrets(7))
    small, large = played[1 << 16], played[0]
    assert small[0] == large[0]
    np.testing.assert_array_equal(small[1], large[1])
    np.testing.assert_array_equal(small[2], large[2])
    assert small[3] == large[3] and small[4] == large[4]
    assert large[1].dtype == np.int64 and large[1].shape == (400,)
