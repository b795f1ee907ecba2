"""Finished and stopped runs: read a run folder's files, list runs side by side, compare two, write a model card.

Nothing here imports torch: a folder of runs is read from its text files (config.yaml, summary.json,
metrics.csv, env.json, doctor.json) only.
"""
