"""Dueling-bandit and multi-armed bandit algorithms (installed as ``dueling_gym.agents``).

Every algorithm lives in its own module, named after the paper's algorithm, behind one API:
``act() -> (i, j)``, ``observe(action, first_won)``, ``recommend()``, ``reset(seed=)``.
Agents never see rewards, ``info`` or the true preference matrix.
"""
