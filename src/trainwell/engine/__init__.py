"""The training engine: the loop (:mod:`trainer`), callbacks, checkpoints, seeding, devices, ``fit``."""
