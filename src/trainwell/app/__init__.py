"""The application layer: wires a config, a task, the engine, the doctor and the report into a run.

Everything below it (``engine``, ``tasks``, ``doctor``, ``report``, ``data``, ``models``) is a library
that never imports this package; ``cli`` sits on top and calls it.
"""
