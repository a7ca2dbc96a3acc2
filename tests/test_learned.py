"""The learned agent: shipped weights, NumPy inference equal to the trained network, reproducible training."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dueling_gym.agents import make_agent
from dueling_gym.agents.learned import (
    DATA_DIRECTORY,
    LearnedAgent,
    arm_record_values,
    load_policy_weights,
    pair_feature_values,
    shipped_policies,
)
from dueling_gym.experiments import simulate
from dueling_gym.observations import N_RECORD_FEATURES, arm_records, decode_observation, encode_wins, pair_features
from repository_paths import TRAINING_HISTORY_DIRECTORY


def test_a_policy_is_shipped_for_five_arms_with_the_commands_of_every_stage():
    assert 5 in shipped_policies()
    # learned_k5 <- distilled3_k5 <- es_distilled2_k5 <- distilled2_k5 <- es_distilled_k5 <- distilled_k5
    # <- es_sigma05_k5 <- es_selfduel_k5 <- es_pooled_k5 <- es_mean_k5 <- ppo_k5: every starting
    # point is kept (the earlier stages in the repository's training history) with its command.
    chain = [("learned_k5.npz", "distilled3_k5.npz", 15, "es"), ("distilled3_k5.npz", "es_distilled2_k5.npz", 3, "distill"),
             ("es_distilled2_k5.npz", "distilled2_k5.npz", 10, "es"), ("distilled2_k5.npz", "es_distilled_k5.npz", 1, "distill"),
             ("es_distilled_k5.npz", "distilled_k5.npz", 6, "es"), ("distilled_k5.npz", "es_sigma05_k5.npz", 0, "distill"),
             ("es_sigma05_k5.npz", "es_selfduel_k5.npz", 4, "es"), ("es_selfduel_k5.npz", "es_pooled_k5.npz", 3, "es"),
             ("es_pooled_k5.npz", "es_mean_k5.npz", 1, "es"), ("es_mean_k5.npz", "ppo_k5.npz", 0, "es")]
    for name, init, seed, algorithm in chain:
        folder = DATA_DIRECTORY if name.startswith("learned_k") else TRAINING_HISTORY_DIRECTORY
        _, metadata = load_policy_weights(folder / name, 5)
        assert metadata["command"].startswith(f"dueling-gym train {algorithm} "), name
        assert f"--init agents/data/{init}" in metadata["command"], name
        assert metadata["config"]["n_arms"] == 5 and metadata["config"]["seed"] == seed, name
    _, ppo = load_policy_weights(TRAINING_HISTORY_DIRECTORY / "ppo_k5.npz", 5)
    assert "dueling_gym.experiments.training" in ppo["command"]


def test_every_number_of_arms_without_a_file_plays_the_general_or_the_large_policy(monkeypatch):
    from dueling_gym.agents import learned, learned_files

    agent = make_agent("learned", n_arms=3, seed=0)
    assert agent.metadata["n_arms"] == 5  # the K = 5 weights, which do not depend on K
    assert learned.shipped_policy_path(8).name == "learned_k8.npz"
    assert learned.shipped_policy_path(4).name == "learned_k4.npz"  # trained for 4 arms after the opening
    assert learned.shipped_policy_path(learned.LARGE_POLICY_FROM - 1) == learned.GENERAL_POLICY
    # From LARGE_POLICY_FROM arms on, the K = 8 weights (chosen on validation problems), played at any K.
    assert learned.LARGE_POLICY_FROM == 12 and learned.LARGE_POLICY.name == "learned_k8.npz"
    for n_arms in (12, 16, 40):
        assert learned.shipped_policy_path(n_arms) == learned.LARGE_POLICY
        assert make_agent("learned", n_arms=n_arms, seed=0).metadata["n_arms"] == 8
    monkeypatch.setattr(learned_files, "GENERAL_POLICY", learned.DATA_DIRECTORY / "absent.npz")
    with pytest.raises(ValueError, match="no learned policy is shipped for n_arms=3"):
        make_agent("learned", n_arms=3)
    with pytest.raises(TypeError, match="deterministic"):
        LearnedAgent(5, deterministic="yes")


def test_compiled_pair_features_equal_the_observation_encoding():
    counts = np.arange(0, 60)
    wins_ij, wins_ji = np.meshgrid(counts, counts, indexing="ij")
    expected = pair_features(wins_ij, wins_ji)
    out = np.empty(4)
    for i, j in [(0, 0), (1, 0), (0, 7), (59, 3), (13, 44), (30, 30)] + [(a, b) for a in range(0, 60, 7) for b in range(0, 60, 5)]:
        pair_feature_values(i, j, out)
        np.testing.assert_array_equal(out.astype(np.float32), expected[i, j])
    big = np.array([10_000, 123_456]), np.array([9_000, 1])
    reference = pair_features(*big)
    for k in range(2):
        pair_feature_values(big[0][k], big[1][k], out)
        np.testing.assert_array_equal(out.astype(np.float32), reference[k])


def test_arm_records_are_the_same_in_numpy_the_compiled_agent_and_torch():
    wins = np.random.default_rng(4).integers(0, 400, size=(30, 5, 5))
    wins[0] = 0  # no duels yet: every record is zero
    wins[1] = np.diag([7, 0, 3, 0, 1])  # self-duels only: no record either
    wins[2, 0, 1:] = 5000  # a clipped evidence value
    expected = arm_records(wins)
    assert expected.shape == (30, 5, N_RECORD_FEATURES) and not expected[:2].any()
    assert expected[2, 0, 0] == np.float32(2.5) and np.all(expected[..., 1] <= 0)
    out = np.empty((5, N_RECORD_FEATURES))
    for run in range(len(wins)):
        arm_record_values(wins[run], out)
        np.testing.assert_array_equal(out.astype(np.float32), expected[run])
    torch = pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    torch.set_num_threads(1)
    from dueling_gym.experiments.learning.pair_policy import PairNetwork

    network = PairNetwork(5, 4)
    pairs, _ = decode_observation(encode_wins(wins), 5)
    np.testing.assert_array_equal(network._records(torch.as_tensor(pairs)).numpy(), expected)
    with pytest.raises(TypeError, match="integer counts"):
        arm_records(wins.astype(float))


def _k5_network(copies: int = 1):
    """The K = 5 weights packed, empty win counts and ``copies`` network caches filled for them."""
    from dueling_gym.pair_network import fill_unplayed, new_network_caches, pack_weights

    weights = pack_weights(load_policy_weights(DATA_DIRECTORY / "learned_k5.npz", 5)[0])
    wins = np.zeros((5, 5), dtype=np.int64)
    caches = [new_network_caches(5, weights) for _ in range(copies)]
    for cache in caches:
        fill_unplayed(cache, weights, wins)
    return weights, wins, caches


def test_kernels_refuse_arrays_they_would_write_past():
    """Compiled code does not check indices: every kernel that takes arrays of its caller refuses
    shapes that do not match, and arms outside 0..K-1, before writing anything."""
    from dueling_gym.pair_network import (
        choose_duel,
        duel_scores,
        fill_unplayed,
        new_network_caches,
        record_network_duel,
    )

    weights, wins, (caches,) = _k5_network()
    record_network_duel(wins, 0, 1, True, caches, weights)
    assert wins[0, 1] == 1
    snapshot = caches.base.copy()
    # Caches of four arms, of a network with 8 hidden units, and with one scratch array too short.
    small, other_network = new_network_caches(4, weights), new_network_caches(5, weights._replace(b1=np.zeros(8)))
    for bad in (small, other_network, caches._replace(scores=np.empty(24))):
        for call in (lambda: fill_unplayed(bad, weights, wins),
                     lambda: duel_scores(bad, wins, 0.1, weights, np.empty((5, 5)))):
            with pytest.raises(ValueError, match="network caches do not match"):
                call()
    with pytest.raises(ValueError, match="network caches do not match"):
        fill_unplayed(caches, weights, np.zeros((5, 4), dtype=np.int64))
    # The kernels of a duel check what they index by duel, every call.
    for bad in (small, other_network, caches._replace(scores=np.empty(24))):
        with pytest.raises(ValueError, match="network caches do not match"):
            choose_duel(bad, wins, 0.1, weights, 0.5)
    for bad in (small, other_network):
        with pytest.raises(ValueError, match="network caches do not match"):
            record_network_duel(wins, 0, 1, True, bad, weights)
    for first, second in ((5, 0), (0, -1), (7, 7), (-1, -1), (2, 5)):
        with pytest.raises(ValueError, match="arms must lie in 0..K-1"):
            record_network_duel(wins, first, second, True, caches, weights)
    with pytest.raises(ValueError, match=r"out must have shape \(K, K\)"):
        duel_scores(caches, wins, 0.1, weights, np.empty((4, 4)))
    with pytest.raises(ValueError, match="four channels"):
        pair_feature_values(1, 2, np.empty(3))
    with pytest.raises(ValueError, match=r"out \(K, 3\)"):
        arm_record_values(wins, np.empty((4, N_RECORD_FEATURES)))
    assert wins.sum() == 1 and np.array_equal(caches.base, snapshot)


def test_encode_and_decode_agree():
    wins = np.random.default_rng(0).integers(0, 20, size=(2, 5, 5))
    pairs, tau = decode_observation(encode_wins(wins), 5)
    np.testing.assert_array_equal(pairs[0, 1, 2], pair_features(wins[0, 1, 2], wins[0, 2, 1]))
    diagonal = pairs[:, np.arange(5), np.arange(5)]
    assert np.all(diagonal[..., :3] == 0)
    np.testing.assert_array_equal(diagonal[..., 3], (np.log1p(wins[:, np.arange(5), np.arange(5)]) / 8).astype(np.float32))
    np.testing.assert_allclose(tau, np.log1p(wins.sum(axis=(1, 2))) / 10, rtol=1e-6)


def test_numpy_scores_equal_the_torch_network_on_a_run(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    torch.set_num_threads(1)
    from dueling_gym.experiments.learning.pair_policy import network_from_weights, network_weights

    weights, metadata = load_policy_weights(DATA_DIRECTORY / "learned_k5.npz", 5)
    hidden = metadata["hidden"]
    # Exercise every part of the network, the max-pooling rows and the global context included.
    noise = np.random.default_rng(3)
    for name in ("A", "B", "S", "G", "G_s", "s_n", "R_a", "R_b", "R_s"):
        weights[name] = weights[name] + noise.normal(0.0, 0.3, size=weights[name].shape)
    path = tmp_path / "policy.npz"
    np.savez(path, **weights, n_arms=np.array(5), hidden=np.array(hidden))
    network = network_from_weights(weights, 5)
    for name, array in network_weights(network).items():  # loading and exporting are inverse
        np.testing.assert_array_equal(array, weights[name].astype(np.float32).reshape(array.shape), err_msg=name)
    agent = LearnedAgent(5, policy=str(path), seed=1)
    outcomes = np.random.default_rng(2)
    for _ in range(400):
        observation = torch.as_tensor(encode_wins(agent.wins)[None])
        with torch.no_grad():
            expected = network.forward_actor(observation).numpy().reshape(5, 5)
        np.testing.assert_allclose(agent.logits(), expected, atol=2e-4)
        duel = agent.act()
        agent.observe(duel, bool(outcomes.random() < 0.5))


def test_first_version_files_load_as_the_same_network_without_max_pooling_or_context(tmp_path):
    weights, _ = load_policy_weights(TRAINING_HISTORY_DIRECTORY / "ppo_k5.npz", 5)
    hidden = weights["W1"].shape[1]
    assert weights["A"].shape == weights["G"].shape == (2 * hidden, hidden)
    assert not weights["A"][hidden:].any() and not weights["G"].any() and not weights["G_s"].any()
    assert not weights["s_n"].any()
    # A file with the context arrays but the wrong shapes is refused, naming the array.
    broken = dict(weights, G=np.zeros((hidden, hidden)))
    np.savez(tmp_path / "broken.npz", **broken, n_arms=np.array(5), hidden=np.array(hidden))
    with pytest.raises(ValueError, match="array G has shape"):
        load_policy_weights(tmp_path / "broken.npz", 5)


def test_seeded_runs_are_reproducible_and_recommend_a_played_winner():
    agent = make_agent("learned", n_arms=5, seed=0)
    first = simulate(agent, "mslr5-noncondorcet", 500, seed=3, record_duels=True)
    second = simulate(make_agent("learned", n_arms=5, seed=0), "mslr5-noncondorcet", 500, seed=3, record_duels=True)
    np.testing.assert_array_equal(first.duels, second.duels)
    assert 0 <= agent.recommend() < 5
    greedy = make_agent("learned", n_arms=5, deterministic=True, seed=0)
    assert greedy.act() == make_agent("learned", n_arms=5, deterministic=True, seed=9).act()


def test_inference_does_not_import_torch():
    code = ("import sys; from dueling_gym.agents import make_agent; a = make_agent('learned', n_arms=5, seed=0); "
            "a.observe(a.act(), True); assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_tiny_training_run_is_reproducible_and_resumes(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    torch.set_num_threads(1)
    from dueling_gym.experiments.learning.training import train

    settings = dict(n_arms=4, horizon=10, timesteps=160, n_envs=8, n_steps=5, batch_size=40, n_epochs=1, hidden=4,
                    eval_every=80, eval_problems=2, progress=False, seed=7, command="test")
    paths = [train(tmp_path / name, **settings) for name in ("a", "b")]
    archives = [np.load(path) for path in paths]
    for name in ("W1", "A", "w", "s"):
        np.testing.assert_array_equal(archives[0][name], archives[1][name])
    other = np.load(train(tmp_path / "c", **{**settings, "seed": 8}))
    assert not np.array_equal(other["W1"], archives[0]["W1"])
    # Stop at 80 duels, then resume from the checkpoint up to 160.
    train(tmp_path / "d", **{**settings, "timesteps": 80})
    assert sorted(p.name for p in (tmp_path / "d").glob("checkpoint_*.zip")) == ["checkpoint_80.zip"]
    resumed = np.load(train(tmp_path / "d", **settings))
    assert '"timesteps_trained": 160' in str(resumed["metadata"])
    # Finished: the same command again touches nothing (no training past the budget, same policy file).
    folder = tmp_path / "d"
    before = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    assert train(folder, **settings) == folder / "policy.npz"
    assert {path.name: path.stat().st_mtime_ns for path in folder.iterdir()} == before
    with pytest.raises(ValueError, match="another configuration"):
        train(tmp_path / "d", **{**settings, "hidden": 5})
    with pytest.raises(ValueError, match="must divide horizon"):
        train(tmp_path / "e", **{**settings, "n_steps": 3})


def test_a_second_network_refreshed_on_the_same_duels_has_the_caches_of_the_first():
    from dueling_gym.pair_network import new_network_caches, record_network_duel, refresh_network_duel

    weights, wins, (counted, refreshed) = _k5_network(copies=2)
    rng = np.random.default_rng(4)
    for _ in range(300):
        first, second = (int(arm) for arm in rng.integers(0, 5, size=2))
        won = bool(rng.random() < 0.5)
        record_network_duel(wins, first, second, won, counted, weights)
        refresh_network_duel(wins, first, second, won, refreshed, weights)
    assert wins.sum() == 300  # counted once
    for name in ("embedding", "pair_input", "summary", "projections", "base", "self_base", "records", "record_terms"):
        np.testing.assert_array_equal(getattr(refreshed, name), getattr(counted, name), err_msg=name)
    with pytest.raises(ValueError, match="arms must lie in 0..K-1"):
        refresh_network_duel(wins, 0, 5, True, refreshed, weights)
    with pytest.raises(ValueError, match="network caches do not match"):
        refresh_network_duel(wins, 0, 1, True, new_network_caches(4, weights), weights)
    assert wins.sum() == 300


def test_the_opening_plays_its_duels_then_the_size_policy_from_every_duel_played():
    from dueling_gym.agents import learned

    problem = np.random.default_rng(5)
    with_opening = make_agent("learned", n_arms=6, opening_duels=40, seed=11)
    opening_alone = make_agent("learned", n_arms=6, policy=str(learned.OPENING_POLICY), seed=11)
    size_alone = make_agent("learned", n_arms=6, opening=None, seed=12)
    assert with_opening.opening_metadata["config"]["n_arms"] == [4, 5, 8, 16]
    assert opening_alone.opening_metadata is None and size_alone.opening_metadata is None  # a policy file plays alone
    preferences = 0.5 + np.triu(problem.uniform(-0.4, 0.4, size=(6, 6)), 1)
    preferences = np.triu(preferences, 1) + np.tril(1.0 - preferences.T, -1) + 0.5 * np.eye(6)
    for t in range(120):
        duel = with_opening.act()
        if t < 40:  # the opening's duels, drawn from the same uniforms
            assert duel == opening_alone.act()
        else:  # the size's network, with caches of every duel the opening played
            np.testing.assert_array_equal(with_opening.logits(), size_alone.logits())
        won = bool(problem.random() < preferences[duel])
        with_opening.observe(duel, won)
        size_alone.observe(duel, won)
        if t < 40:
            opening_alone.observe(duel, won)
    assert with_opening.opening_metadata is not None


def _assert_phase_arguments_are_checked(name: str, duels_name: str, tmp_path) -> None:
    """The opening's or the late policy's file argument and its duel count are refused when wrong."""
    from dueling_gym.agents import learned

    with pytest.raises(ValueError, match=duels_name):
        LearnedAgent(5, **{duels_name: 0})
    with pytest.raises(TypeError, match=f"{name} must be the path"):
        LearnedAgent(5, **{name: 3})
    with pytest.raises(ValueError, match="does not exist"):
        LearnedAgent(5, **{name: str(tmp_path / "absent.npz")})
    with pytest.raises(ValueError, match="holds a policy for 8 arms, not 5"):
        LearnedAgent(5, **{name: str(learned.DATA_DIRECTORY / "learned_k8.npz")})


def test_the_opening_is_checked_and_enters_the_content_digests(tmp_path):
    from dueling_gym.agents import learned

    digests = LearnedAgent.content_digests(5, {})
    assert set(digests) == {"policy_sha256", "opening_sha256", "opening_duels", "late_sha256", "late_from",
                            "cycle_sha256", "cycle_until", "cycle_rule_sha256"}
    assert digests["opening_duels"] == "100"
    assert LearnedAgent.content_digests(16, {})["opening_duels"] == "1000"  # the length enters the identity
    assert [learned.opening_length(k) for k in (2, 15, 16, 40)] == [100, 100, 1000, 1000]
    assert make_agent("learned", n_arms=16, seed=0).opening_duels == 1000
    assert make_agent("learned", n_arms=16, opening_duels=100, seed=0).opening_duels == 100
    assert set(LearnedAgent.content_digests(5, {"opening": None, "late": None, "cycle": None})) == {"policy_sha256"}
    # From 16 arms on the shipped opening is the one trained on 16 and 24 arms, and its file enters the identity.
    assert [learned.shipped_opening_path(k).name for k in (2, 15, 16, 40)] == [
        "learned_opening.npz", "learned_opening.npz", "learned_opening_large.npz", "learned_opening_large.npz"]
    assert LearnedAgent.content_digests(15, {})["opening_sha256"] != LearnedAgent.content_digests(16, {})["opening_sha256"]
    assert make_agent("learned", n_arms=15, seed=0).opening_metadata["config"]["n_arms"] == [4, 5, 8, 16]
    assert make_agent("learned", n_arms=24, seed=0).opening_metadata["config"]["n_arms"] == [16, 24]
    # With 5 arms the opening is the one trained further with three cyclic Copeland winners, handing
    # over to each size's policy after its 100 duels as the agent plays it.
    assert [learned.shipped_opening_path(k).name for k in (4, 5, 6)] == [
        "learned_opening.npz", "learned_opening_k5.npz", "learned_opening.npz"]
    five = make_agent("learned", n_arms=5, seed=0)
    assert five.opening_duels == 100
    assert "cyclic_copeland_winners" in five.opening_metadata["config"]["families"]
    assert five.opening_metadata["config"]["handover_at"] == 100
    assert five.opening_metadata["config"]["init"] == "agents/data/learned_opening.npz"
    assert LearnedAgent.content_digests(5, {})["opening_sha256"] != LearnedAgent.content_digests(4, {})["opening_sha256"]
    assert set(LearnedAgent.content_digests(5, {"policy": str(learned.GENERAL_POLICY)})) == {"policy_sha256"}
    _assert_phase_arguments_are_checked("opening", "opening_duels", tmp_path)
    # Without the opening, the agent plays what it played before the opening existed.
    plain = simulate(make_agent("learned", n_arms=5, opening=None, cycle=None, seed=0), "multisol", 300, seed=3,
                     record_duels=True)
    alone = simulate(make_agent("learned", n_arms=5, policy=str(learned.FIVE_ARM_POLICY), seed=0), "multisol", 300,
                     seed=3, record_duels=True)
    np.testing.assert_array_equal(plain.duels, alone.duels)


def test_the_late_policy_takes_over_after_late_from_duels_up_to_sixteen_arms(tmp_path):
    from dueling_gym.agents import learned

    assert learned.LATE_FROM == 1000
    assert learned.SMALL_LATE_POLICY_UNTIL == 5
    assert [learned.shipped_late_path(k) for k in (2, 4, 5)] == [learned.SMALL_LATE_POLICY] * 3
    assert [learned.shipped_late_path(k) for k in (6, 8, 11)] == [learned.LATE_POLICY] * 3
    assert [learned.shipped_late_path(k) for k in (12, 16)] == [learned.LARGE_LATE_POLICY] * 2
    assert [learned.shipped_late_path(k) for k in (17, 24, 40)] == [None] * 3
    late = make_agent("learned", n_arms=8, seed=0).late_metadata
    assert late["command"].startswith("dueling-gym train es") and "--after-shipped 1000" in late["command"]
    assert late["config"]["n_arms"] == [4, 5, 6, 8] and late["config"]["horizon"] == 10000
    # Trained for the regret it leaves: the fitness read at 10^5, extrapolated from 5000 and 10^4.
    assert late["config"]["horizons"] == [5000, 10000] and late["config"]["extrapolate_to"] == 100000
    assert "--init agents/data/learned_late.npz" in late["command"]  # the first late policy, now in training-history/
    assert late["config"]["seed"] == 55
    # Up to 5 arms: the same trained one round further (from learned_late.npz, another trainer seed).
    small = make_agent("learned", n_arms=5, seed=0).late_metadata
    assert "--init agents/data/learned_late.npz" in small["command"] and small["config"]["seed"] == 56
    assert {key: value for key, value in small["config"].items() if key != "seed"} == {
        key: value for key, value in late["config"].items() if key != "seed"}
    large = make_agent("learned", n_arms=16, seed=0).late_metadata
    assert "--init agents/data/learned_late.npz" in large["command"] and large["config"]["n_arms"] == [12, 16]
    assert make_agent("learned", n_arms=17, seed=0).late_metadata is None
    assert make_agent("learned", n_arms=5, late=None, seed=0).late_metadata is None
    # A policy file plays alone (no shipped late policy), unless a late policy is named.
    assert make_agent("learned", n_arms=5, policy=str(learned.GENERAL_POLICY), seed=0).late_metadata is None
    digests = LearnedAgent.content_digests(5, {})
    assert digests["late_from"] == "1000"
    assert LearnedAgent.content_digests(5, {"late_from": 300})["late_from"] == "300"  # the duel enters the identity
    assert "late_sha256" not in LearnedAgent.content_digests(17, {})
    assert LearnedAgent.content_digests(12, {})["late_sha256"] != digests["late_sha256"]
    assert "late_sha256" not in LearnedAgent.content_digests(5, {"late": None})
    named = LearnedAgent.content_digests(5, {"late": str(learned.OPENING_POLICY)})["late_sha256"]
    assert named != digests["late_sha256"]
    _assert_phase_arguments_are_checked("late", "late_from", tmp_path)
    # Up to duel late_from the run is the agent's without a late policy, duel for duel; then the
    # late policy chooses, with caches of every duel played.
    with_late = simulate(make_agent("learned", n_arms=5, late_from=150, cycle=None, seed=0), "multisol", 400, seed=3,
                         record_duels=True)
    without = simulate(make_agent("learned", n_arms=5, late=None, cycle=None, seed=0), "multisol", 400, seed=3,
                       record_duels=True)
    np.testing.assert_array_equal(with_late.duels[:150], without.duels[:150])
    assert not np.array_equal(with_late.duels[150:], without.duels[150:])
    late_agent = make_agent("learned", n_arms=5, late_from=150, cycle=None, seed=0)
    alone = make_agent("learned", n_arms=5, policy=str(learned.SMALL_LATE_POLICY), seed=0)
    outcomes = np.random.default_rng(9)
    for t in range(150):
        duel = late_agent.act()
        won = bool(outcomes.random() < 0.55)
        late_agent.observe(duel, won)
        alone.observe(duel, won)
    np.testing.assert_array_equal(late_agent.logits(), alone.logits())


@pytest.mark.parametrize("opening", ["shipped", None])
def test_a_copy_made_during_the_opening_continues_through_the_switch(opening):
    import copy
    import pickle

    def drive(agent, steps, outcomes):
        trace = []
        for _ in range(steps):
            duel = agent.act()
            agent.observe(duel, bool(outcomes.random() < 0.6))
            trace.append(duel)
        return trace

    agent = make_agent("learned", n_arms=6, opening=opening, late_from=120, seed=2)
    drive(agent, 50, np.random.default_rng(0))  # mid-opening; the copies then cross duels 100 and 120
    pickled, forked = pickle.loads(pickle.dumps(agent)), copy.deepcopy(agent)
    traces = [drive(copied, 120, np.random.default_rng(1)) for copied in (forked, agent, pickled)]
    assert traces[0] == traces[1] == traces[2]
    np.testing.assert_array_equal(pickled.logits(), agent.logits())


def _observe_record(agents, record, repeats):
    """Feed every agent the same duels: ``record[i][j]`` wins of ``i`` over ``j`` per round, ``repeats`` rounds."""
    for _ in range(repeats):
        for first in range(record.shape[0]):
            for second in range(record.shape[0]):
                for _ in range(record[first, second]):
                    for agent in agents:
                        agent.observe((first, second), True)


def test_empirical_top_cycle_needs_three_tied_leaders_beating_every_arm_outside_the_tie():
    from dueling_gym.agents._pair_statistics import empirical_top_cycle, fill_copeland_counts

    scratch = np.zeros(5, dtype=np.int64)  # the counts' buffer, as the agent keeps one
    cycle = np.array([[0, 3, 1, 2, 2], [1, 0, 3, 2, 2], [3, 1, 0, 2, 2], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0]])
    assert empirical_top_cycle(cycle, scratch)  # arms 0, 1, 2 beat each other in turn and beat 3 and 4
    leader_loses_outside = cycle.copy()
    leader_loses_outside[3, 0] = 5  # arm 0 now loses to arm 3: arm 0 no longer leads
    assert not empirical_top_cycle(leader_loses_outside, scratch)
    condorcet = cycle.copy()
    condorcet[0, 1], condorcet[1, 0] = 3, 1
    condorcet[0, 2], condorcet[2, 0] = 3, 1  # arm 0 beats everyone
    assert not empirical_top_cycle(condorcet, scratch)
    unplayed = cycle.copy()
    unplayed[0, 3] = unplayed[3, 0] = 0  # a leader's unplayed pair is a tie, not a win
    assert not empirical_top_cycle(unplayed, scratch)
    two_leaders = cycle.copy()
    two_leaders[2, 3], two_leaders[3, 2] = 0, 2  # arm 2 loses to arm 3: only arms 0 and 1 lead
    assert not empirical_top_cycle(two_leaders, scratch)
    # Five arms each beating the next two: all five tie, with no arm outside the tie to beat.  One
    # near tie read the wrong way makes this of a problem whose Copeland winner beats three arms.
    regular = np.array([[1 if (second - first) % 5 in (1, 2) else 0 for second in range(5)] for first in range(5)])
    assert not empirical_top_cycle(regular, scratch)
    assert not empirical_top_cycle(np.zeros((5, 5), dtype=np.int64), scratch)
    # The buffer is written arm by arm without bounds checks: one too short is refused, not overrun.
    with pytest.raises(ValueError, match="fewer entries"):
        fill_copeland_counts(cycle, np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="fewer entries"):
        empirical_top_cycle(cycle, np.zeros(4, dtype=np.int64))


def test_the_cycle_policy_chooses_in_top_cycles_before_duel_1000_and_the_size_policy_after(tmp_path):
    import pickle

    from dueling_gym.agents import learned

    assert [learned.shipped_cycle_path(k) for k in (4, 5, 6, 16)] == [None, learned.CYCLE_POLICY, None, None]
    five = make_agent("learned", n_arms=5, seed=0)
    assert five.cycle_until == learned.LATE_FROM
    assert "--objective hinge" in five.cycle_metadata["command"] and five.cycle_metadata["config"]["seed"] == 63
    assert make_agent("learned", n_arms=5, cycle=None, seed=0).cycle_metadata is None
    assert make_agent("learned", n_arms=5, policy=str(learned.GENERAL_POLICY), seed=0).cycle_metadata is None
    assert LearnedAgent.content_digests(5, {"cycle_until": 300})["cycle_until"] == "300"
    assert "cycle_sha256" not in LearnedAgent.content_digests(4, {})
    assert "cycle_sha256" not in LearnedAgent.content_digests(5, {"cycle": None})
    # A study's record names the rule's source, so that runs of another version of it are not reused.
    assert LearnedAgent.content_digests(5, {})["cycle_rule_sha256"] == learned.cycle_rule_digest()
    assert "cycle_rule_sha256" not in LearnedAgent.content_digests(5, {"cycle": None})
    _assert_phase_arguments_are_checked("cycle", "cycle_until", tmp_path)
    alone = {name: make_agent("learned", n_arms=5, policy=str(path), seed=0) for name, path in
             (("cycle", learned.CYCLE_POLICY), ("size", learned.FIVE_ARM_POLICY), ("late", learned.SMALL_LATE_POLICY))}
    agents = [five, *alone.values()]
    # Arms 0, 1, 2 beat each other in turn (3 to 1 per round) and arms 3 and 4 (2 to 0): a top cycle.
    cycle = np.array([[0, 3, 1, 2, 2], [1, 0, 3, 2, 2], [3, 1, 0, 2, 2], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0]])
    _observe_record(agents, cycle, 8)  # 200 duels: past the opening
    np.testing.assert_array_equal(five.logits(), alone["cycle"].logits())
    # Arm 0 now beats arm 2 too: a Condorcet winner, no top cycle, so the size's policy chooses.
    _observe_record(agents, np.where(np.arange(5)[:, None] * 5 + np.arange(5) == 2, 40, 0), 1)
    np.testing.assert_array_equal(five.logits(), alone["size"].logits())
    copied = pickle.loads(pickle.dumps(five))
    # Past duel 1000, still no top cycle (arm 0 keeps beating arm 2): the late policy chooses.
    no_cycle = cycle.copy()
    no_cycle[2, 0] = 0
    _observe_record(agents + [copied], no_cycle, 40)
    assert five.wins.sum() > 1000
    np.testing.assert_array_equal(five.logits(), alone["late"].logits())
    np.testing.assert_array_equal(copied.logits(), five.logits())
    # The cycle back (arm 2 beats arm 0 again): the size's policy chooses instead of the late one.
    _observe_record(agents, np.where(np.arange(5)[:, None] * 5 + np.arange(5) == 10, 100, 0), 1)
    np.testing.assert_array_equal(five.logits(), alone["size"].logits())


def test_without_the_cycle_policy_five_arms_play_as_before_it():
    from dueling_gym.agents import learned

    before = {"opening": str(learned.FIVE_ARM_OPENING_POLICY), "late": str(learned.SMALL_LATE_POLICY)}
    plain = simulate(make_agent("learned", n_arms=5, cycle=None, seed=0), "multisol", 1500, seed=5, record_duels=True)
    named = simulate(make_agent("learned", n_arms=5, policy=str(learned.FIVE_ARM_POLICY), **before, seed=0),
                     "multisol", 1500, seed=5, record_duels=True)
    np.testing.assert_array_equal(plain.duels, named.duels)
    with_cycle = simulate(make_agent("learned", n_arms=5, seed=0), "multisol", 1500, seed=5, record_duels=True)
    np.testing.assert_array_equal(with_cycle.duels[:100], plain.duels[:100])  # the opening is the same
    assert not np.array_equal(with_cycle.duels, plain.duels)
    # The same trajectory, duel for duel, in the fused loop, the act/observe loop and a Gymnasium loop.
    from agent_checks import assert_paths_agree_on

    assert_paths_agree_on("multisol", lambda n_arms: make_agent("learned", n_arms=n_arms), 1500, seed=5)


def test_the_five_arm_size_policy_is_the_mean_of_the_k4_and_k5_weights_by_its_recorded_command(tmp_path):
    from dueling_gym.agents import learned
    from dueling_gym.pair_network import average_policy_files

    assert learned.shipped_policy_path(5) == learned.FIVE_ARM_POLICY
    assert learned.shipped_policy_path(6) == learned.GENERAL_POLICY  # other sizes keep the K = 5 weights
    metadata = make_agent("learned", n_arms=5, seed=0).metadata
    assert metadata["config"]["algorithm"] == "average" and list(metadata["config"]["sources"]) == [
        "learned_k5.npz", "learned_k4.npz"]
    command = metadata["command"]
    assert command.startswith("python -c") and "average_policy_files" in command
    remade = average_policy_files([DATA_DIRECTORY / "learned_k5.npz", DATA_DIRECTORY / "learned_k4.npz"],
                                  tmp_path / "remade.npz", n_arms=5)
    shipped, _ = load_policy_weights(learned.FIVE_ARM_POLICY, 5)
    again, remade_metadata = load_policy_weights(remade, 5)
    k5, _ = load_policy_weights(DATA_DIRECTORY / "learned_k5.npz")
    k4, _ = load_policy_weights(DATA_DIRECTORY / "learned_k4.npz")
    for name, array in shipped.items():
        np.testing.assert_array_equal(array, again[name])  # bit for bit
        np.testing.assert_array_equal(array, (k5[name] + k4[name]) / 2)
    assert remade_metadata["config"]["sources"] == metadata["config"]["sources"]
    with pytest.raises(ValueError, match="at least two"):
        average_policy_files([DATA_DIRECTORY / "learned_k5.npz"], tmp_path / "one.npz", n_arms=5)
    with pytest.raises(ValueError, match="n_arms"):
        average_policy_files([DATA_DIRECTORY / "learned_k5.npz", DATA_DIRECTORY / "learned_k4.npz"], tmp_path / "x.npz",
                             n_arms=1)
    with pytest.raises(ValueError, match="holds a policy for 5 arms, not 4"):
        LearnedAgent(4, policy=str(learned.FIVE_ARM_POLICY))
