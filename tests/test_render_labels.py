"""The ``rgb_array`` frames explain themselves: title and step, axis labels, colour bars with
ticks and a legend; drawing them reads counts only and leaves every random stream alone."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import dueling_gym
from dueling_gym.envs._font import TEXT_HEIGHT, text_mask, text_width
from dueling_gym.envs._render import (
    COLOUR_BAR_TOP,
    FRAME_SHAPE,
    PANEL_LEFTS,
    PANEL_SIDE,
    PANEL_TOP,
    TITLE_HEIGHT,
    frame_labels,
    preference_frame,
)

_INK = [40, 40, 40]


def _inked(region):
    return bool(np.all(region == _INK, axis=-1).any())


def _contains(frame, mask):
    """Whether the ink of ``mask`` appears somewhere in ``frame`` (exactly, with background around)."""
    ink = np.all(frame == _INK, axis=-1)
    height, width = mask.shape
    windows = np.lib.stride_tricks.sliding_window_view(ink, (height, width))
    return bool(np.all(windows == mask, axis=(-2, -1)).any())


def test_frame_has_the_title_the_step_and_the_axis_labels():
    frame = preference_frame(np.arange(16).reshape(4, 4), t=42, title="DuelingBandit-v0", problem="sushi",
                             contestant="edge")
    assert frame.shape == FRAME_SHAPE and frame.dtype == np.uint8
    band = frame[:TITLE_HEIGHT]
    assert _contains(band, text_mask("DuelingBandit-v0", scale=2))
    assert _contains(band, text_mask("problem: sushi"))
    assert _contains(band, text_mask("step t=42", scale=2))
    assert _contains(frame, text_mask("column edge j"))
    assert _contains(frame, np.rot90(text_mask("row edge i")))  # reads bottom to top, as a y label
    assert _contains(frame, text_mask("P(row beats column), observed"))
    assert _contains(frame, text_mask("duels per pair (log scale)"))


def test_colour_bars_span_the_scales_of_the_maps():
    frame = preference_frame(np.array([[0, 9], [1, 0]])).astype(int)
    row = COLOUR_BAR_TOP + 5
    preference, counts = frame[row, PANEL_LEFTS[0]:PANEL_LEFTS[0] + PANEL_SIDE], \
        frame[row, PANEL_LEFTS[1]:PANEL_LEFTS[1] + PANEL_SIDE]
    assert preference[0].tolist() == [33, 102, 172] and preference[-1].tolist() == [178, 24, 43]  # blue .. red
    assert preference[PANEL_SIDE // 2].min() > 250  # white at 1/2
    assert counts[0].tolist() == [255, 255, 255] and counts[-1].tolist() == [0, 90, 50]  # white .. dark green
    # The map's colours lie on its bar: 0 beat 1 in nine duels of ten (0.9 on the bar) ...
    cell = PANEL_SIDE // 2
    red = frame[PANEL_TOP + cell // 2, PANEL_LEFTS[0] + cell + cell // 2]
    np.testing.assert_allclose(red, preference[round(0.9 * (PANEL_SIDE - 1))], atol=3)
    # ... and the most duelled pair has the darkest green, the end of the count bar.
    assert frame[PANEL_TOP + cell // 2, PANEL_LEFTS[1] + cell + cell // 2].tolist() == [0, 90, 50]


def test_count_ticks_name_the_largest_count_and_powers_of_ten():
    small, large = preference_frame(np.array([[0, 3], [2, 0]])), preference_frame(np.array([[0, 900], [345, 0]]))
    ticks = slice(COLOUR_BAR_TOP + 10, None)
    assert _contains(small[ticks], text_mask("5")) and not _contains(small[ticks], text_mask("10"))
    for label in ("1", "10", "100", "1245"):
        assert _contains(large[ticks], text_mask(label))
    # Only the count ticks differ between the two frames' surroundings.
    np.testing.assert_array_equal(small[:PANEL_TOP], large[:PANEL_TOP])


def test_legend_says_what_grey_and_dark_cells_are():
    wins = np.zeros((3, 3))
    plain = preference_frame(wins)
    dark = preference_frame(wins, np.eye(3, dtype=bool))
    legend = slice(COLOUR_BAR_TOP + 10 + TEXT_HEIGHT, None)
    assert _contains(plain[legend], text_mask("not duelled yet"))
    assert not _contains(plain[legend], text_mask("cannot duel")) and _contains(dark[legend], text_mask("cannot duel"))


@pytest.mark.parametrize("labels", [{"title": "RankerDuel-v0", "problem": "x" * 200}, {"title": "x" * 200}])
def test_a_long_title_is_shortened_and_leaves_the_step_readable(labels):
    frame = preference_frame(np.ones((2, 2)), t=123456, **labels)
    step = text_mask("step t=123456", scale=2)
    assert _contains(frame[:TITLE_HEIGHT], step)
    ink = np.flatnonzero(np.all(frame[:TITLE_HEIGHT] == _INK, axis=-1).any(axis=0))
    gap = np.diff(ink).max()  # the title ends well before the step starts
    assert gap > 8 and ink.max() < FRAME_SHAPE[1]


def test_text_masks():
    mask = text_mask("Ab?", scale=2)
    assert mask.dtype == bool and mask.shape == (2 * TEXT_HEIGHT, text_width("Ab?", scale=2))
    np.testing.assert_array_equal(text_mask("\u00e9"), text_mask("?"))  # a character the font lacks
    with pytest.raises(ValueError, match="scale"):
        text_mask("a", scale=0)
    with pytest.raises(ValueError, match="font"):
        text_mask("a", font="serif")


def test_frame_labels_name_the_environment_and_its_problem():
    env = gym.make("DuelingBandit-v0", preferences="sushi")
    env.reset(seed=0)
    assert frame_labels(env.unwrapped) == {"title": "DuelingBandit-v0", "problem": "sushi"}
    # built without gymnasium.make (no spec) and not reset yet (no problem)
    assert frame_labels(dueling_gym.envs.DuelingBanditEnv()) == {"title": "DuelingBanditEnv", "problem": None}


@pytest.mark.parametrize("env_id", dueling_gym.ENV_IDS)
def test_rendering_leaves_the_random_streams_alone(env_id):
    """Rendering every step changes no observation, reward or info and no generator's state."""
    runs = []
    for render in (False, True):
        env = gym.make(env_id, render_mode="rgb_array" if render else None)
        env.reset(seed=3)
        env.action_space.seed(3)
        trajectory = []
        for _ in range(60):
            observation, reward, terminated, truncated, info = env.step(env.action_space.sample())
            if render:
                assert env.render().shape == FRAME_SHAPE
            trajectory.append((int(observation), float(reward), terminated, truncated, repr(info)))
        runs.append((trajectory, env.unwrapped.np_random.bit_generator.state))
        env.close()
    assert runs[0] == runs[1]
