"""``trainwell lr-find``: the learning-rate range test on the run a config describes, without training it: the
same seeded initial weights, optimizer, loss, data, precision and device that ``trainwell train`` would use."""

from __future__ import annotations

from pathlib import Path

from trainwell._errors import TrainwellError
from trainwell.config import Config
from trainwell.engine.lr_range import END_LR, START_LR, STEPS, LrRange


def lr_find(config: Config, folder: Path, *, start: float = START_LR, end: float = END_LR,
            steps: int = STEPS) -> LrRange:
    """Sweep the config's run and write lr_find.json and lr_find.png into ``folder``."""
    from trainwell.app.lr_sweep import record, single_process, sweep_run
    from trainwell.app.run import prepare

    if config.train.batch_size == "auto":
        raise TrainwellError("lr-find sweeps with one batch size; --batch-size auto is chosen by `trainwell train`.",
                             fix="give --batch-size a number (the one your run will use)")
    parts = prepare(config)
    single_process(parts.strategy.world_size, "trainwell lr-find")
    result = sweep_run(config, parts, start=start, end=end, steps=steps)
    configured = config.train.lr if isinstance(config.train.lr, float) else None
    record(folder, result, chosen=result.suggestion, configured=configured)
    return result
