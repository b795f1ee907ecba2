"""split-leakage: the validation / test data holds samples the model was trained on.

Every model input gets a cheap per-sample fingerprint, computed on the device (a few hundred
evenly spaced elements of each sample, their bits mixed into one integer: no wait), kept as
training data when gradients are on and as evaluation data when a trained model is called under
``no_grad``. On steps that are not sampled the inputs are only kept (a reference, up to
``KEEP_BYTES``; an input changed in place since is left out, and from then on inputs are
fingerprinted at once); they are fingerprinted together, same-shaped ones in one go, and read
back on sampled steps and at the end. Evaluation inputs are
grouped by where they come from (a DataLoader's dataset, or the tensor they are sliced from), so a
validation set and a test set are judged apart.

Quiet on purpose: evaluating on the whole training set (training accuracy), discrete data with few
distinct rows (identical rows are then normal; continuous values do not repeat by chance, so there
identical rows are copies: oversampling before the split, or duplicate records), and any run that
also evaluates on a set that shares nothing with the training data (the overlapping one is then a
training-set metric).
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any

import torch
from torch import nn

from trainwell.doctor.check import Check, Text, register, sampled_and_evaluation, sampled_only
from trainwell.doctor.events import FedCall, ForwardEvent, StepEvent

COLUMNS = 256  # elements per sample that go into its fingerprint
MAX_TRAIN = 300_000  # fingerprints kept (memory stays bounded on big datasets)
MAX_EVAL = 100_000
MAX_SOURCES = 64  # training sources kept per model (inputs made anew each step are not worth more)
MAX_PENDING = 200_000  # rows waiting to be read back
KEEP_BYTES = 16 * 2**20  # inputs kept unhashed between sampled steps (bigger ones are fingerprinted at once)


def _first_batch_tensor(inputs: tuple[Any, ...]) -> torch.Tensor | None:
    x = inputs[0] if inputs else None
    if isinstance(x, torch.Tensor) and x.ndim >= 2 and x.numel() > 0 and not x.is_complex():
        return x
    return None


class _Continuity:
    """Whether inputs hold continuous values: most of their first values distinct (at least ``LOOK`` values, from
    as many inputs as that takes). One-hot, categorical, count and pixel data repeat values, and so do 16-bit
    floats; their rows can recur by chance. Continuous values do not: repeated rows are copies. The values are
    copied as they come and counted when ``answer`` is first read (at the end: no step waits for it)."""

    LOOK = 1024
    MOST = 4096

    def __init__(self) -> None:
        self.full = False  # enough values kept (or the dtype decided it): add() is not needed any more
        self.parts: list[torch.Tensor] = []
        self.have = 0
        self._answer: bool | None = None

    def add(self, x: torch.Tensor) -> None:
        if not x.is_floating_point() or x.element_size() < 4:
            self._answer, self.full, self.parts = False, True, []
            return
        part = x.detach().reshape(-1)[:self.MOST - self.have].clone()  # (a copy: the script may change x later)
        self.parts.append(part)
        self.have += part.numel()
        self.full = self.have >= self.LOOK

    @property
    def answer(self) -> bool | None:
        """True or False once ``LOOK`` values were seen (one read-back, the first time); None before."""
        if self._answer is None and self.full:
            values, self.parts = torch.cat([p.to(self.parts[0].device) for p in self.parts]), []
            self._answer = bool(torch.unique(values).numel() >= 0.5 * values.numel())
        return self._answer


_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


class _Hasher:
    """Per-sample fingerprints on the input's device; the column indices and weights are made once per size."""

    def __init__(self) -> None:
        self.cache: dict[tuple[int, torch.device], tuple[torch.Tensor, torch.Tensor]] = {}

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.detach().reshape(x.shape[0], -1)
        n = flat.shape[1]
        key = (n, flat.device)
        if key not in self.cache:
            g = torch.Generator().manual_seed(n)
            idx = torch.linspace(0, n - 1, min(n, COLUMNS)).round().long().unique()
            weights = torch.randint(1, 2**31 - 1, (len(idx),), generator=g, dtype=torch.int64) * 2 + 1
            self.cache[key] = (idx.to(flat.device), weights.to(flat.device))
        idx, weights = self.cache[key]
        cols = flat if len(idx) == n else flat.index_select(1, idx)  # small samples: every element
        if cols.is_floating_point():
            cols = cols.contiguous().view(_BITS[cols.element_size()])  # the exact bits: same sample, same number
        return (cols.long() * weights).sum(1)


@register
class SplitLeakage(Check):
    id = "split-leakage"
    severity = "error"
    summary = "the validation / test data holds samples that are also in the training data"
    text = {
        "en": Text(
            title="Validation data overlaps the training data",
            message="{share} of the {count} distinct samples the model was evaluated on (under no_grad) were also "
                    "fed to it in training. The model has memorised those, so the validation score measures "
                    "memory, not how it does on new data: it looks better than it is, and choosing models or "
                    "stopping points by it is misleading. Common causes: the split is made after duplicating "
                    "(oversampling) or augmenting, duplicate records in the data, two random permutations instead "
                    "of one, overlapping slices, or training on the full dataset after splitting it.",
            fix="drop duplicate records, split once, with one permutation, before anything else (oversample or augment "
                "the training part afterwards), and train on the training part only: "
                "train_set, val_set = torch.utils.data.random_split(dataset, [0.8, 0.2])"),
        "zh": Text(
            title="验证数据与训练数据重叠",
            message="模型（在 no_grad 下）评估用的 {count} 个不同样本中，有 {share} 在训练时也输入过。模型已经记住了这些样本，"
                    "所以验证成绩衡量的是记忆力，而不是在新数据上的表现：结果偏乐观，用它来挑模型或决定何时停止都会误导。"
                    "常见原因：先复制（过采样）或增强数据再划分、数据里本来就有重复记录、用了两次不同的随机排列、"
                    "切片区间互相重叠，或者划分之后又用全部数据训练。",
            fix="先去掉重复记录，在其他处理之前只用一个随机排列划分一次（之后再对训练部分过采样或增强），并且只用训练部分训练："
                "train_set, val_set = torch.utils.data.random_split(dataset, [0.8, 0.2])"),
    }

    PARTIAL = 0.25  # a quarter of the evaluated rows trained on, or more, is reported with the share
    WHOLE = 0.95  # this share or more: (nearly) the whole set was trained on
    CLEAN = 0.05  # below this share: a clean held-out set
    REPEAT_ROWS = 1000  # training rows in one read-back, of which at most...
    REPEAT_NEW = 0.01  # ...this share new means the training data repeats

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.hash = _Hasher()
        self.train: dict[int, set[int]] = {}  # model number -> fingerprints of its training inputs
        self.train_size = 0
        # model number -> its no_grad rounds (calls with no backward() between them): [backward count, step, calls]
        self.rounds: dict[int, list[list[int]]] = {}
        # (model, round, source, fingerprints, those already trained on when evaluated)
        self.evaluated: list[tuple[int, int, Any, list[int], set[int]]] = []
        self.eval_size = 0
        # (model, round or None = training, hashes or the input itself, shape, the input's version or None)
        self.pending: list[tuple[int, Any, torch.Tensor, int, int | None]] = []
        self.pending_rows = 0
        self.kept_bytes = 0  # of the inputs kept unhashed in ``pending``
        self.at_once = False  # an input kept was changed in place (a reused buffer): fingerprint them at once
        self.trained: dict[int, tuple[int, bool]] = {}  # model number -> (step, is trained)
        # A number per model that is never reused (ids are, once a model is freed: k-fold runs build one per fold).
        self.numbers: weakref.WeakKeyDictionary[nn.Module, int] = weakref.WeakKeyDictionary()
        self.counter = itertools.count()
        self.last_model: tuple[Any, int] = (lambda: None, -1)  # (weak reference, number) of the last model called
        # id(tensor) -> (weak reference, number); tensors compare by value, so not a WeakKeyDictionary
        self.sources: dict[int, tuple[weakref.ref[torch.Tensor], int]] = {}
        # Whether the training and the evaluation inputs hold continuous values (their exact repeats are copies).
        self.train_values = _Continuity()
        self.eval_values = _Continuity()
        self.where: str | None = None
        self.repeats: set[int] = set()  # models whose training inputs read back lately were almost all known
        # model number -> where its training inputs came from: ("loader", dataset id) or ("tensor", number)
        self.train_sources: dict[int, set[tuple[str, Any]]] = {}

    # Training inputs between windows come together (``on_fed``); evaluation calls come as events wherever they fall.
    @sampled_and_evaluation
    def on_forward(self, ev: ForwardEvent) -> None:
        s = self.session
        batch = s.call_batch  # the dataset of a batch fetched since the model call before, else None
        if self.reported or self.pending_rows > MAX_PENDING:
            return
        x = _first_batch_tensor(ev.inputs)
        if x is None or not self.session.has_parameters(ev.module):
            return
        model = self._number(ev.module)
        if ev.grad_enabled:
            if model not in self.repeats:  # (its training data came round again: known, as in ``on_fed``)
                self._train(model, x, batch, keep=False)
            return
        if not self._is_trained(ev.module, model) or self.eval_size >= MAX_EVAL:
            return
        rounds = self.rounds.setdefault(model, [])
        s = self.session
        if not rounds or rounds[-1][0] != s.backward_count:
            rounds.append([s.backward_count, s.step, 0])
        rounds[-1][2] += 1
        source = ("loader", batch) if batch is not None else ("tensor", self._tensor_number(x))
        self.where = self.where or ev.where
        if not self.eval_values.full:
            self.eval_values.add(x)
        self._add(model, (len(rounds) - 1, source), x)

    def needs_fed(self) -> bool:
        """Not once every model's training data has come round again (its samples are known: training calls come
        from models with parameters only), or after a finding."""
        s = self.session
        return not all(self.skips_fed(m) for m in list(s.models) if s.has_parameters(m))

    def skips_fed(self, module: nn.Module) -> bool:
        """Its training data came round again (or a finding was made): its later training calls add nothing."""
        return self.reported or self._number(module) in self.repeats

    def on_fed(self, calls: list[FedCall]) -> None:
        module: Any = None
        known = False
        for call in calls:
            if self.reported or self.pending_rows > MAX_PENDING:
                return
            if call.module is not module:  # (the same model, call after call: looked up once)
                module = call.module
                model = self._number(module)
                known = model in self.repeats  # its training data came round again: its samples are known
            if known:
                continue
            x = _first_batch_tensor(call.inputs)
            if x is not None:
                self._train(model, x, call.batch, keep=True)

    def _number(self, module: nn.Module) -> int:
        """The model's number (never reused, unlike an id)."""
        last_ref, model = self.last_model
        if last_ref() is not module:  # (a WeakKeyDictionary lookup makes a weak reference: not every call)
            model = self.numbers.get(module)
            if model is None:
                model = self.numbers[module] = next(self.counter)
            self.last_model = (weakref.ref(module), model)
        return model

    def _train(self, model: int, x: torch.Tensor, batch: int | None, keep: bool) -> None:
        """A training input: where it came from, and its rows (fingerprinted now, or kept to be with others)."""
        sources = self.train_sources.setdefault(model, set())
        if len(sources) < MAX_SOURCES:  # where its training inputs come from (a loader's dataset, a tensor)
            sources.add(("loader", batch) if batch is not None else ("tensor", self._tensor_number(x)))
        if not self.train_values.full:
            self.train_values.add(x)
        if self.train_size < MAX_TRAIN:
            self._add(model, None, x, keep)

    def _add(self, model: int, evaluation: Any, x: torch.Tensor, keep: bool = False) -> None:
        """Queue ``x``'s rows: fingerprinted now, or (``keep``, or between windows) kept as the tensor itself and
        fingerprinted with the others when they are read."""
        x = x.detach()
        size = x.numel() * x.element_size()
        shape = hash(tuple(x.shape[1:]))  # mixed into the fingerprints: same bits, another shape, another sample
        # (An inference-mode tensor has no version to tell a later change by: fingerprinted at once.)
        if not keep and (self.session.sampled or self.at_once or self.kept_bytes + size > KEEP_BYTES) or x.is_inference():
            self.pending.append((model, evaluation, self.hash(x) ^ shape, shape, None))
        else:  # kept as it is; fingerprinted with the others on the next sampled step
            self.pending.append((model, evaluation, x, shape, x._version))
            self.kept_bytes += size
        self.pending_rows += x.shape[0]

    def _tensor_number(self, x: torch.Tensor) -> int:
        """One number per tensor that evaluation data is sliced from (it stays alive: x_val), never reused."""
        base = x._base if x._base is not None else x
        ref, number = self.sources.get(id(base), (None, -1))
        if ref is None or ref() is not base:  # new, or a new tensor where a freed one was
            number = next(self.counter)
            self.sources[id(base)] = (weakref.ref(base), number)
            if len(self.sources) > 10_000:  # one-off tensors (a policy's states): forget the dead ones
                self.sources = {k: v for k, v in self.sources.items() if v[0]() is not None}
        return number

    def _is_trained(self, model: nn.Module, number: int) -> bool:
        step, known = self.trained.get(number, (-1, False))
        if step != self.session.step:
            known = self.session.is_trained(model)
            self.trained[number] = (self.session.step, known)
        return known

    @sampled_only
    def on_step(self, ev: StepEvent) -> None:
        self._read()

    def _fingerprints(self, pending: list[tuple[int, Any, torch.Tensor, int, int | None]]) -> list[tuple[int, Any, list[int]]]:
        """``pending`` as (model, evaluation, fingerprints), in the order the inputs were fed: kept inputs of one
        sample shape hashed together, and every fingerprint read back from its device at once (one wait per
        device, no per-input slicing of tensors)."""
        parts: dict[Any, list[torch.Tensor]] = {}  # device -> fingerprint tensors, in the order of ``order``
        order: dict[Any, list[tuple[int, int]]] = {}  # device -> (position in pending, rows) per input
        groups: dict[tuple[Any, ...], list[tuple[int, torch.Tensor]]] = {}
        for i, (_, _, t, shape, version) in enumerate(pending):
            if version is None:  # fingerprinted when it was fed
                parts.setdefault(t.device, []).append(t)
                order.setdefault(t.device, []).append((i, t.shape[0]))
            elif t._version != version:  # changed in place since it was fed: what the model saw is gone
                self.at_once = True
            else:
                groups.setdefault((t.shape[1:], t.dtype, t.device, shape), []).append((i, t))
        for (_, _, device, shape), inputs in groups.items():  # one shape per group, so one shape hash
            xs = [t for _, t in inputs]
            parts.setdefault(device, []).append(self.hash(torch.cat(xs) if len(xs) > 1 else xs[0]) ^ shape)
            order.setdefault(device, []).extend((i, t.shape[0]) for i, t in inputs)
        rows: dict[int, list[int]] = {}
        for device, tensors in parts.items():
            values = (torch.cat(tensors) if len(tensors) > 1 else tensors[0]).tolist()
            at = 0
            for i, n in order[device]:
                rows[i] = values[at:at + n]
                at += n
        # Fed order matters: only samples trained on before an evaluation count as leaked into it.
        return [(pending[i][0], pending[i][1], rows[i]) for i in sorted(rows)]

    def _read(self) -> None:
        pending, self.pending, self.pending_rows, self.kept_bytes = self.pending, [], 0, 0
        entries = self._fingerprints(pending) if pending else []
        if not entries:
            return
        fed: dict[int, list[int]] = {}  # model -> [training rows read back, how many of them were new]
        for model, evaluation, rows in entries:
            n = len(rows)
            if evaluation is None:
                seen = self.train.setdefault(model, set())
                before = len(seen)
                seen.update(rows)
                self.train_size += len(seen) - before
                counts = fed.setdefault(model, [0, 0])
                counts[0] += n
                counts[1] += len(seen) - before
            else:
                # Only samples trained on *before* this evaluation count: states a policy acts on and later
                # learns from (reinforcement learning) or pseudo-labelled data are seen in eval mode first.
                trained = self.train.get(model, set())
                self.evaluated.append((model, *evaluation, rows, {r for r in rows if r in trained}))
                self.eval_size += len(rows)
        # A whole epoch came round again (augmented or streamed data keeps bringing new samples, and stays
        # watched on every step): the training set is known, new evaluation inputs still are compared with it.
        for model, (n, new) in fed.items():
            if n >= self.REPEAT_ROWS and new <= self.REPEAT_NEW * n:
                self.repeats.add(model)

    def _is_evaluation(self, model: int, i: int) -> bool:
        """Whether no_grad round ``i`` is an evaluation: several calls in a row (a validation loop), steps
        apart from the rounds around it (once per epoch), or the only one. One call per training step
        (a teacher's soft labels, pseudo-labels, a mean teacher) is part of training."""
        rounds = self.rounds[model]
        near = [abs(rounds[j][1] - rounds[i][1]) for j in (i - 1, i + 1) if 0 <= j < len(rounds)]
        return rounds[i][2] >= 2 or not near or min(near) >= 2

    def on_end(self) -> None:
        if self.reported:
            return
        self._read()
        units: dict[Any, set[int]] = {}
        first: dict[Any, tuple[int, list[int]]] = {}  # each source's first evaluation round: (round, fingerprints)
        leaked: dict[Any, set[int]] = {}
        for model, i, source, rows, before in self.evaluated:
            if not self._is_evaluation(model, i):
                continue
            key = (model, source)
            units.setdefault(key, set()).update(rows)
            leaked.setdefault(key, set()).update(before)
            r, kept = first.setdefault(key, (i, []))
            if r == i:
                kept.extend(rows)
        judged: list[tuple[float, int, int, bool]] = []
        for (model, source), seen in units.items():
            train, rows = self.train.get(model, set()), first[(model, source)][1]
            overlap = leaked[(model, source)]
            if len(train) < 20 or len(seen) < 20:
                continue  # too few
            if len(set(rows)) < 0.9 * len(rows) and not (self.train_values.answer and self.eval_values.answer):
                continue  # discrete data with many identical samples: a row recurs by chance on both sides
            # (Continuous values do not repeat by chance: identical rows are copies, oversampled before the split
            # or duplicate records in the data.)
            same = source in self.train_sources.get(model, set())  # a slice of the training tensor / dataset
            judged.append((len(overlap) / len(seen), len(seen), len(train), same))
        if not judged:
            return  # nothing evaluated
        # A set that shares a quarter or more, but not nearly all, of its rows with training is never a
        # training-set metric (an index typo: val = X[600:1000] next to X[:900]): reported even when a clean
        # held-out set exists too. A set (nearly) wholly trained on next to a clean one is a training-set metric.
        partial = [j for j in judged if self.PARTIAL <= j[0] < self.WHOLE]
        if min(j[0] for j in judged) < self.CLEAN and not partial:
            return  # a clean held-out set exists
        share, count, trained, same = max(partial or judged)
        if share < self.PARTIAL:
            return  # little overlap
        if share >= self.WHOLE and (same or count >= 0.8 * trained):
            # Every set evaluated is (nearly) all training rows, and is the training data itself (a slice of the
            # tensor or the dataset it trains on, or nearly all of it): no held-out data at all, not a leak.
            self._no_validation(count, trained, share)
            return
        self.report(self.where, {"evaluated_samples": count, "also_in_training": round(share * count),
                                 "share": round(share, 3), "training_samples_seen": trained},
                    share=f"{share:.0%}", count=count)

    def _no_validation(self, count: int, trained: int, share: float) -> None:
        sibling = next((c for c in self.session.checks if c.id == NoValidation.id), None)
        if sibling is not None:
            sibling.report(self.where, {"evaluated_samples": count, "also_in_training": round(share * count),
                                        "training_samples_seen": trained},
                           count=count, trained=trained)


@register
class NoValidation(Check):
    """Reported by ``split-leakage``, which sees every input (this check has no handlers of its own)."""

    id = "no-validation"
    severity = "info"
    summary = "the model is only ever evaluated on rows it trains on: there is no validation data"
    text = {
        "en": Text(
            title="No validation data: the model is only evaluated on rows it trains on",
            message="Every sample the model was evaluated on (under no_grad; {count} distinct samples) is a "
                    "training sample, taken from the same data it trains on ({trained} distinct training samples "
                    "seen), and no held-out data was evaluated at all. The score printed is a training score: it "
                    "shows whether the model fits what it has seen, not how it does on new data, so it cannot tell "
                    "you about overfitting or when to stop. If those rows were meant as held-out data, they are "
                    "in the training data too.",
            fix="split off a validation set once, before training, train on the rest and evaluate on it: "
                "perm = torch.randperm(len(X)); val_idx, train_idx = perm[:len(X) // 5], perm[len(X) // 5:]  "
                "# then train on X[train_idx] and evaluate on X[val_idx] (with a Dataset: "
                "train_set, val_set = torch.utils.data.random_split(dataset, [0.8, 0.2]))"),
        "zh": Text(
            title="没有验证数据：模型只在它训练用的样本上评估",
            message="模型（在 no_grad 下）评估的每个样本（共 {count} 个不同样本）都是训练样本，取自它训练用的同一份数据"
                    "（已见过 {trained} 个不同的训练样本），而且完全没有在留出的数据上评估过。打印出来的成绩是训练成绩："
                    "它只说明模型能否拟合见过的数据，不能说明它在新数据上的表现，因此无法判断是否过拟合、何时该停止。"
                    "如果这些样本本来是打算留作验证的，那它们也在训练数据里。",
            fix="在训练之前一次性划出验证集，用其余部分训练，在验证集上评估："
                "perm = torch.randperm(len(X)); val_idx, train_idx = perm[:len(X) // 5], perm[len(X) // 5:]  "
                "# 然后用 X[train_idx] 训练，用 X[val_idx] 评估（用 Dataset 时："
                "train_set, val_set = torch.utils.data.random_split(dataset, [0.8, 0.2])）"),
    }
