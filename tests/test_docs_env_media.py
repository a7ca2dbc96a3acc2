"""The animated episodes of the environment pages (``docs/_env_media.py``), on tiny episodes."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

PIL = pytest.importorskip("PIL")

import dueling_gym
from dueling_gym.envs._render import FRAME_SHAPE

from repository_paths import import_docs_module  # noqa: E402




@pytest.fixture(scope="module")
def media():
    return import_docs_module("_env_media")


def _png(frame: np.ndarray) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(frame).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.mark.parametrize("env_id", dueling_gym.ENV_IDS)
def test_every_environment_gets_a_gif_and_a_thumbnail(media, env_id, tmp_path):
    from PIL import Image

    written = {}

    def write(path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written[path.name] = data

    result = media.episode_media(env_id, tmp_path / "img", write, _png, frames=4, duels=6)
    assert set(written) == {result.gif, result.thumbnail} == {f"{env_id.lower()}.gif", f"{env_id.lower()}.png"}
    gif = Image.open(tmp_path / "img" / result.gif)
    assert gif.format == "GIF" and gif.n_frames == 4 and gif.size == (FRAME_SHAPE[1], FRAME_SHAPE[0])
    assert gif.info["loop"] == 0
    thumbnail = np.asarray(Image.open(tmp_path / "img" / result.thumbnail).convert("RGB"))
    assert thumbnail.shape == FRAME_SHAPE
    gif.seek(gif.n_frames - 1)
    last = np.asarray(gif.convert("RGB")).astype(int)
    assert np.abs(last - thumbnail).mean() < 3  # the GIF's palette approximates the last frame
    assert "6 duels" in result.caption and "rgb_array" in result.caption


def test_frames_are_taken_at_geometric_steps_of_one_seeded_episode(media):
    steps = media.capture_steps(1000, 5)
    assert steps[0] == 0 and steps[-1] == 1000 and steps == sorted(set(steps)) and len(steps) == 5
    first, first_steps = media.episode_frames("DuelingBandit-v0", None, 20, frames=5)
    again, _ = media.episode_frames("DuelingBandit-v0", None, 20, frames=5)
    assert len(first) == len(first_steps) and all(np.array_equal(a, b) for a, b in zip(first, again))
    assert all(frame.shape == FRAME_SHAPE and frame.dtype == np.uint8 for frame in first)
    with pytest.raises(ValueError, match="duel"):
        media.capture_steps(0, 5)


def test_gif_bytes_refuse_mismatched_durations(media):
    frame = np.zeros((16, 16, 3), dtype=np.uint8)
    assert media.gif_bytes([frame, frame], [100, 100]).startswith(b"GIF89a")
    with pytest.raises(ValueError, match="duration"):
        media.gif_bytes([frame, frame], [100])


def test_overview_page_has_a_card_per_environment(media):
    ids = list(dueling_gym.ENV_IDS)
    page = media.overview_page(ids, {i: f"{i.lower()}.png" for i in ids}, {i: f"about {i}" for i in ids})
    for env_id in ids:
        assert f"[![{env_id}: last rgb_array frame of an episode](img/{env_id.lower()}.png)]({env_id.lower()}.md)" in page
        assert f"about {env_id}" in page
    with pytest.raises(ValueError, match="thumbnail"):
        media.overview_page(ids, {}, {})
