"""What differs between tasks, behind one small interface, and the ``TASKS`` registry.

``app/run.py`` asks the task named by ``config.task`` for the data, the model, the loss,
the evaluation metric and the input transforms, trains with the shared ``Trainer``, and
lets the task add its own figures to the summary and report at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainwell._registry import Registry

if TYPE_CHECKING:
    from torch import nn

    from trainwell.config import Config
    from trainwell.data.bundle import DataBundle
    from trainwell.engine.trainer import InputTransform, Metric, Trainer

TASKS: Registry[type[Task]] = Registry("task")


class Task:
    """The classification defaults; other tasks override what differs."""

    def build_data(self, config: Config) -> DataBundle:
        from trainwell.data import build_data

        return build_data(config.data)

    def build_model(self, config: Config, bundle: DataBundle) -> nn.Module:
        from trainwell.models import build_model

        return build_model(config.model, bundle.input_shape, bundle.num_classes)

    def build_loss(self, config: Config, bundle: DataBundle) -> nn.Module:
        """The training loss. Its own parameters, if any (a margin loss's class centres), are optimized too."""
        from trainwell.tasks.classification import make_loss

        return make_loss(config.train.label_smoothing)

    def metric(self, config: Config, bundle: DataBundle) -> Callable[[], Metric]:
        from trainwell.engine.trainer import Accuracy

        return Accuracy

    def transforms(self, config: Config, bundle: DataBundle) -> tuple[InputTransform | None, InputTransform | None]:
        """(train, eval) transforms from a raw batch to model input: scale, augment, normalize."""
        from trainwell.data.augment import Augment

        pre = bundle.preprocess
        augment = Augment(config.data.augment, config.data.shift, config.data.rotate, config.data.zoom)

        def train_transform(x: Any, g: Any) -> Any:
            x = pre.scaled(x)
            if augment.active and pre.kind == "image" and g is not None:
                x = augment(x, g)
            return pre.normalize(x)

        def eval_transform(x: Any, g: Any) -> Any:
            return pre(x)

        return train_transform, eval_transform

    def loader_options(self, config: Config, dataset: Any, *, train: bool) -> dict[str, Any]:
        """Extra ``EpochLoader`` options for this task's data (text: per-batch padding, length buckets)."""
        return {}

    def payload(self, config: Config, bundle: DataBundle) -> dict[str, Any]:
        """What ``predict`` needs to treat new inputs exactly like the training data (in every checkpoint)."""
        return {"preprocess": bundle.preprocess.to_dict(), "class_names": bundle.class_names,
                "num_classes": bundle.num_classes, "label_mapping": bundle.info.get("label_mapping"),
                "info": bundle.info}

    def finish(self, trainer: Trainer, bundle: DataBundle, config: Config,
               run_dir: Path) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        """After training, with the best weights loaded: extra summary values and report sections
        (title, HTML). Called on rank 0 alone, after the test split was evaluated with the loss and metric (the last
        exchange between processes: the others do not wait for this).

        Classification: the test split's confusion matrix (also in summary.json) and its most confident mistakes."""
        if bundle.test is None or len(bundle.test) == 0:
            return {}, []
        from trainwell.report.classification_section import ShownMistake, classification_sections
        from trainwell.tasks.test_errors import confusion_matrix, predict_probabilities, worst_mistakes

        _, eval_transform = self.transforms(config, bundle)
        collate = self.loader_options(config, bundle.test, train=False).get("collate_fn")
        try:
            probs, labels = predict_probabilities(trainer.model, bundle.test, device=trainer.device,
                                                  transform=eval_transform, collate=collate)
        except ValueError as e:  # e.g. a user's model with several outputs: the report says why the figures lack
            return {}, [("Confusion matrix (test split)", f"<p>Not drawn: {escape(str(e))}.</p>")]
        counts = confusion_matrix(labels, probs.argmax(axis=1), bundle.num_classes)
        names = bundle.class_names
        shown = [ShownMistake(self.shown_input(bundle.test[m.index][0]), names[m.true], names[m.predicted],
                              m.probability, m.true_probability) for m in worst_mistakes(probs, labels)]
        sections = classification_sections(counts, names, shown, kind=bundle.preprocess.kind,
                                           scale=bundle.preprocess.scale, features=bundle.preprocess.features)
        return {"test_confusion_matrix": {"classes": names, "counts": counts.tolist()}}, sections

    def shown_input(self, raw: Any) -> Any:
        """A test sample's raw input as the report shows it (pixels, feature values; text overrides this)."""
        return raw.numpy() if hasattr(raw, "numpy") else raw

    def adopt(self, payload: dict[str, Any]) -> None:
        """Take back what a trained run's checkpoint recorded about its inputs before ``build_data`` reads the data
        again (export's parity samples): a text run's Hugging Face tokenizer, not the hub's."""

    def write_files(self, run_dir: Path) -> None:
        """Files of the task's own that a new run folder keeps (a Hugging Face model's tokenizer)."""


def get_task(name: str) -> Task:
    """An instance of the task registered as ``name``."""
    import trainwell.tasks  # noqa: F401  (register the built-ins)

    return TASKS.get(name)()
