"""The pictures of the environment pages, made from the environments while the documentation builds.

* an animated GIF per environment: its own ``render_mode="rgb_array"`` frames over one short,
  seeded episode (a fixed agent, or uniformly random pairs), taken at steps spaced
  geometrically so the early duels, where the picture changes most, get most of the frames;
* the episode's last frame as a PNG, the environment's thumbnail on the overview page;
* the overview page itself (``environments/index``): every registered environment with its
  thumbnail and summary, each linking to its page, in the layout of Gymnasium's index of
  environments.

Everything is written below the folder the caller passes (a folder of the build), never below
``docs/``.  The GIF is written with Pillow (which matplotlib, a requirement of the ``docs``
extra, requires).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import numpy as np

from dueling_gym.agents import make_agent

#: How each environment's episode is played: the policy (``None``: uniformly random pairs of the
#: action space, seeded) and the number of duels.
EPISODES = {
    "DuelingBandit-v0": ("rmed1", 3000),
    "CopelandDuel-v0": ("ccb", 3000),
    "CombinatorialDuel-v0": (None, 2000),
}
DEFAULT_EPISODE = (None, 1000)
#: Frames per GIF, the reset frame included: enough to follow the maps fill in, few enough that
#: a GIF stays far below 500 kB.
GIF_FRAMES = 36
#: Display time of a frame, the first frame and the last frame, in milliseconds.
FRAME_MS, FIRST_MS, LAST_MS = 140, 700, 2500


@dataclass
class EpisodeMedia:
    """What :func:`episode_media` wrote: the GIF, the thumbnail (file names in the folder), the caption."""

    gif: str
    thumbnail: str
    caption: str


def capture_steps(duels: int, frames: int) -> list[int]:
    """Up to ``frames`` distinct steps from 0 (the reset) to ``duels``, spaced geometrically."""
    if duels < 1 or frames < 2:
        raise ValueError(f"need at least one duel and two frames, got duels={duels}, frames={frames}")
    steps = np.unique(np.rint(np.geomspace(1, duels, frames - 1)).astype(int))
    return [0, *steps.tolist()]


def episode_frames(env_id: str, policy: str | None, duels: int, frames: int = GIF_FRAMES,
                   seed: int = 0) -> tuple[list[np.ndarray], list[int]]:
    """``env.render()`` frames of one episode of ``env_id`` played by ``policy`` (an agent name of
    :func:`~dueling_gym.agents.make_agent`, or ``None`` for uniformly random actions), taken
    after the steps :func:`capture_steps` returns.  Returns the frames and their steps."""
    steps = capture_steps(duels, frames)
    env = gym.make(env_id, render_mode="rgb_array", max_episode_steps=duels)
    try:
        env.reset(seed=seed)
        env.action_space.seed(seed)
        agent = make_agent(policy, n_arms=env.unwrapped.n_arms, seed=seed) if policy else None
        images = [env.render()]
        for step in range(1, duels + 1):
            action = agent.act() if agent else env.action_space.sample()
            observation, *_ = env.step(action)
            if agent:
                agent.observe(action, bool(observation))
            if step in steps:
                images.append(env.render())
    finally:
        env.close()
    return images, steps


def gif_bytes(frames: list[np.ndarray], durations: list[int]) -> bytes:
    """An animated GIF (looping) of ``(H, W, 3)`` ``uint8`` frames, each shown ``durations[k]`` ms.

    One palette serves every frame (chosen from a sample of them, so colours do not flicker from
    frame to frame), without dithering (the maps are flat colours).
    """
    from PIL import Image

    if not frames or len(frames) != len(durations):
        raise ValueError(f"need one duration per frame, got {len(frames)} frames and {len(durations)} durations")
    sample = np.concatenate(frames[:: max(1, len(frames) // 6)] + [frames[-1]], axis=0)
    palette = Image.fromarray(sample).quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    images = [Image.fromarray(frame).quantize(palette=palette, dither=Image.Dither.NONE) for frame in frames]
    buffer = io.BytesIO()
    images[0].save(buffer, format="GIF", save_all=True, append_images=images[1:], duration=durations, loop=0)
    return buffer.getvalue()


def episode_media(env_id: str, folder: Path, write, png_bytes, frames: int = GIF_FRAMES,
                  duels: int | None = None) -> EpisodeMedia:
    """Write ``<id>.gif`` (the episode) and ``<id>.png`` (its last frame) to ``folder``.

    ``write(path, bytes)`` writes a file (unchanged files are left alone); ``png_bytes`` encodes
    a frame as PNG.  ``duels``: the episode's length (default: :data:`EPISODES`).
    """
    policy, default_duels = EPISODES.get(env_id, DEFAULT_EPISODE)
    duels = default_duels if duels is None else duels
    images, steps = episode_frames(env_id, policy, duels, frames)
    durations = [FIRST_MS] + [FRAME_MS] * (len(images) - 2) + [LAST_MS]
    stem = env_id.lower()
    write(folder / f"{stem}.gif", gif_bytes(images, durations))
    write(folder / f"{stem}.png", png_bytes(images[-1]))
    who = f"`make_agent(\"{policy}\", ...)`" if policy else "uniformly random pairs (`env.action_space.sample()`)"
    shown = ", ".join(f"{step:,}" for step in steps[:4]) + f", ... {steps[-1]:,}"
    caption = (f"One episode of {duels:,} duels of {who} (seed 0): `env.render()` frames with "
               f"`render_mode=\"rgb_array\"` after {shown} duels ({len(steps)} frames), drawn while this page "
               "was built.  Left, the observed preference of each row over each column; right, how often each "
               "pair duelled; the `render_mode` argument below describes the frame.")
    return EpisodeMedia(f"{stem}.gif", f"{stem}.png", caption)


def overview_page(env_ids: list[str], thumbnails: dict[str, str], summaries: dict[str, str]) -> str:
    """The page ``environments/index``: every environment in ``env_ids`` as a card, its
    thumbnail (a file of ``img/``, by id) linking to its page, its name and summary."""
    missing = [env_id for env_id in env_ids if env_id not in thumbnails or env_id not in summaries]
    if missing:
        raise ValueError(f"no thumbnail or summary for {missing}")
    lines = [
        "# Environments",
        "",
        "Every environment that `import dueling_gym` registers with Gymnasium, made with "
        "`gym.make(env_id)`.  Each picture is the last `rgb_array` frame of the episode its page "
        "animates: the observed preferences (left) and the duel counts (right) of its contestants.",
        "",
        "```{container} environment-gallery",
        "",
    ]
    for env_id in env_ids:
        page = f"{env_id.lower()}.md"
        lines += [
            f"- [![{env_id}: last rgb_array frame of an episode](img/{thumbnails[env_id]})]({page})",
            "",
            f"  [**{env_id}**]({page})",
            "",
            f"  {summaries[env_id]}",
            "",
        ]
    lines += ["```", "", "The NumPy-batched versions of `DuelingBandit-v0` and `CopelandDuel-v0` are described "
              "on {doc}`vector`.", ""]
    return "\n".join(lines)
