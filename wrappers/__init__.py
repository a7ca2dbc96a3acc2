"""Gymnasium wrappers for the dueling environments (installed as ``dueling_gym.wrappers``).

Reductions from duels to ordinary multi-armed bandits, observation wrappers that expose
duel statistics to learned policies, and flat action spaces for DQN-style learners.
"""
