"""Rendering: ``rgb_array`` heat maps (NumPy only) that Gymnasium's RecordVideo can record, and ``ansi``."""

from __future__ import annotations

import importlib.util

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import dueling_gym
from dueling_gym.envs._render import (
    FRAME_SHAPE,
    PANEL_LEFTS,
    PANEL_SIDE,
    PANEL_TOP,
    TITLE_HEIGHT,
    blank_frame,
    frame_labels,
    preference_frame,
)

ENV_IDS = dueling_gym.ENV_IDS


def _play(env, steps, seed=0):
    env.action_space.seed(seed)
    for _ in range(steps):
        env.step(env.action_space.sample())


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_rgb_array_frames(env_id):
    env = gym.make(env_id, render_mode="rgb_array")
    assert "rgb_array" in env.metadata["render_modes"] and "ansi" in env.metadata["render_modes"]
    env.reset(seed=0)
    first = env.render()
    assert isinstance(first, np.ndarray) and first.dtype == np.uint8 and first.shape == FRAME_SHAPE
    assert FRAME_SHAPE[0] % 16 == 0 and FRAME_SHAPE[1] % 16 == 0  # what video encoders prefer
    _play(env, 200)
    second = env.render()
    assert second.shape == FRAME_SHAPE and second.dtype == np.uint8
    assert not np.array_equal(first, second)  # the heat maps follow the duels
    _play(env, 1)
    assert env.render().shape == FRAME_SHAPE
    env.reset(seed=0)
    np.testing.assert_array_equal(env.render(), first)  # a new episode starts from empty maps
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_env_checker_accepts_every_render_mode(env_id):
    for mode in ("rgb_array", "ansi"):
        check_env(gym.make(env_id, render_mode=mode).unwrapped, skip_render_check=False)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_ansi_is_kept(env_id):
    env = gym.make(env_id, render_mode="ansi")
    env.reset(seed=0)
    _play(env, 20)
    text = env.render()
    assert isinstance(text, str) and "t=20" in text


def test_rgb_array_before_reset_and_without_render_mode():
    sampled = dueling_gym.envs.DuelingBanditEnv(render_mode="rgb_array")  # a sampler: no problem before reset
    np.testing.assert_array_equal(sampled.render(), blank_frame("DuelingBanditEnv"))
    with pytest.warns(UserWarning, match="without a render_mode"):
        assert gym.make("CopelandDuel-v0").unwrapped.render() is None
    for cls in (dueling_gym.envs.CopelandDuelEnv, dueling_gym.envs.CombinatorialDuelEnv):
        with pytest.raises(ValueError, match="render_mode"):
            cls(render_mode="video")


def test_frame_colours():
    wins = np.array([[0, 9, 0], [1, 0, 0], [0, 0, 4]])  # 0 beats 1 nine times in ten; 2 only self-duels
    frame = preference_frame(wins).astype(int)
    (left, right), top, cell = PANEL_LEFTS, PANEL_TOP, PANEL_SIDE // 3

    def pixel(panel_left, i, j):
        return frame[top + 2 + i * cell + cell // 2, panel_left + 2 + j * cell + cell // 2]

    red, blue = pixel(left, 0, 1), pixel(left, 1, 0)
    assert red[0] > red[2] and blue[2] > blue[0]  # row 0 wins: red; row 1 loses: blue
    assert pixel(left, 0, 2).tolist() == [200, 200, 200]  # never duelled: grey
    assert pixel(right, 0, 1).tolist() == pixel(right, 1, 0).tolist()  # counts are symmetric
    assert pixel(right, 0, 1)[1] < pixel(right, 2, 2)[1] < 255  # ten duels darker than four self-duels
    incomparable = np.array([[True, True, False], [True, True, False], [False, False, True]])
    dark = preference_frame(wins, incomparable).astype(int)
    assert dark[top + 2 + cell // 2, left + 2 + 2 * cell + cell // 2].tolist() == [70, 70, 70]
    many = preference_frame(np.ones((300, 300)))  # more contestants than pixels: sampled
    assert many.shape == FRAME_SHAPE
    with pytest.raises(ValueError, match="square"):
        preference_frame(np.ones((2, 3)))


def test_combinatorial_frame_shows_incomparable_edges_dark():
    env = gym.make("CombinatorialDuel-v0", render_mode="rgb_array")
    env.reset(seed=0)
    base = env.unwrapped
    positions = np.asarray(base.problem.edge_positions)
    assert (positions[:, None] != positions[None, :]).any()
    _play(env, 100)
    base.step_edges(0, 0)
    wins = base.edge_win_counts
    assert wins.sum() == base.samples and np.trace(wins) == base.self_duel_counts.sum()
    np.testing.assert_array_equal(env.render(), preference_frame(wins, positions[:, None] == positions[None, :],
                                                                 t=base.samples, **frame_labels(base),
                                                                 contestant="edge"))


_INK = [40, 40, 40]


def _inked(region):
    return bool(np.all(region == _INK, axis=-1).any())


def test_frames_label_the_contestants_and_show_the_step():
    wins = np.arange(25).reshape(5, 5)
    plain, stepped = preference_frame(wins), preference_frame(wins, t=1234)
    header = TITLE_HEIGHT  # the title's and the step's rows
    assert not _inked(plain[:header]) and _inked(stepped[:header])
    np.testing.assert_array_equal(plain[header:], stepped[header:])  # t changes nothing else
    assert not np.array_equal(stepped[:header], preference_frame(wins, t=1235)[:header])
    cell = PANEL_SIDE // 5
    for panel_left in PANEL_LEFTS:
        for arm in range(5):
            middle = PANEL_TOP + arm * cell + cell // 2  # every arm: a label left of its row ...
            assert _inked(plain[middle - 3:middle + 3, panel_left - 16:panel_left])
            centre = panel_left + arm * cell + cell // 2  # ... and above its column
            assert _inked(plain[PANEL_TOP - 14:PANEL_TOP, centre - 3:centre + 3])
        # between two labels and inside the maps there is no ink
        assert not _inked(plain[PANEL_TOP + cell - 2:PANEL_TOP + cell + 2, panel_left - 16:panel_left])
        assert not _inked(plain[PANEL_TOP:PANEL_TOP + PANEL_SIDE, panel_left:panel_left + PANEL_SIDE])


def test_many_contestants_are_labelled_at_round_strides():
    frame = preference_frame(np.ones((300, 300)), t=0)
    assert frame.shape == FRAME_SHAPE
    # Rows of the whole frame (the first label sticks out above the map), columns of the row
    # labels only (a column label may reach into the gutter's last pixels).
    gutter = frame[TITLE_HEIGHT:PANEL_TOP + PANEL_SIDE, PANEL_LEFTS[0] - 16:PANEL_LEFTS[0] - 4]
    rows = np.flatnonzero(np.all(gutter == _INK, axis=-1).any(axis=1)) + TITLE_HEIGHT - PANEL_TOP
    starts = rows[np.r_[True, np.diff(rows) > 1]]  # first pixel row of each label (10 pixels high)
    # Labels 0, 50, ..., 250: six, centred on their contestants (300 of them in 256 pixels).
    assert len(starts) == 6
    np.testing.assert_allclose(starts + 5, (np.arange(0, 300, 50) + 0.5) * PANEL_SIDE / 300, atol=1)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_frame_shows_the_environment_step(env_id):
    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    _play(env, 7)
    base = env.unwrapped
    wins = base.edge_win_counts if env_id == "CombinatorialDuel-v0" else base.win_counts
    labels = frame_labels(base)
    assert labels == {"title": env_id, "problem": base.problem.name}
    expected = preference_frame(wins, t=7, **labels)
    np.testing.assert_array_equal(env.render()[:TITLE_HEIGHT], expected[:TITLE_HEIGHT])


@pytest.mark.skipif(importlib.util.find_spec("moviepy") is None,
                    reason="RecordVideo needs moviepy: pip install 'dueling-gym[video]'")
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_record_video(env_id, tmp_path):
    from gymnasium.wrappers import RecordVideo
    from moviepy.video.io.VideoFileClip import VideoFileClip

    folder = tmp_path / "videos"
    env = RecordVideo(gym.make(env_id, render_mode="rgb_array", max_episode_steps=25), str(folder),
                      episode_trigger=lambda episode: True, disable_logger=True)
    env.reset(seed=0)
    truncated = False
    while not truncated:
        truncated = env.step(env.action_space.sample())[3]
    env.close()
    videos = list(folder.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 0
    clip = VideoFileClip(str(videos[0]))
    try:
        frames = [frame.shape for frame in clip.iter_frames()]
    finally:
        clip.close()
    assert frames == [FRAME_SHAPE] * 26  # the reset and 25 steps, at full size
