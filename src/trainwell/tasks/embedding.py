"""Embedding (face verification): images -> L2-normalized vectors trained with ArcFace or batch-hard triplets.

Validation every epoch reports the verification ROC AUC (``val_auc``, which picks best.pt);
at the end the threshold is chosen on validation pairs and the test pairs are measured,
together with raw-pixel cosine similarity as the baseline. See docs/EMBEDDING.md.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainwell.tasks.base import TASKS, Task

if TYPE_CHECKING:
    from torch import nn

    from trainwell.config import Config
    from trainwell.data.bundle import DataBundle
    from trainwell.engine.trainer import Metric, Trainer

# Datasets whose classes are not people: say so wherever their figures are shown.
_FACE_SETS = ("lfw", "olivetti-faces", "image-folder")


@TASKS.register("embedding", "images -> L2-normalized embeddings for verification (ArcFace or triplet loss)")
class EmbeddingTask(Task):
    def build_data(self, config: Config) -> DataBundle:
        from trainwell.data.identities import identity_bundle

        bundle = identity_bundle(super().build_data(config), config.embedding, config.data)
        if bundle.val is None or bundle.test is None:
            from trainwell._errors import ConfigError

            raise ConfigError("The embedding task needs validation and test splits (the threshold is chosen on "
                              "validation pairs and measured on test pairs).",
                              fix="keep data.test_fraction above 0 (and give an image folder's val/ and test/ "
                                  "folders, if it has a train/ folder)")
        notes: list[str] = []
        if config.data.name not in _FACE_SETS:
            notes.append(f"embedding: {config.data.name}'s {bundle.num_classes} classes stand in for identities "
                         "(they are not faces)")
        if config.embedding.protocol == "open":
            notes.append(f"embedding: open protocol, identities {', '.join(bundle.info['heldout_identities'])} "
                         "held out of training (validation and test use only them)")
        if bundle.info.get("skipped_identities"):
            notes.append(f"embedding: skipped {bundle.info['skipped_identities']} identit"
                         f"{'y' if bundle.info['skipped_identities'] == 1 else 'ies'} with a single image "
                         f"({', '.join(bundle.info['skipped_identity_names'])})")
        bundle.info["notes"] = [*bundle.info.get("notes", []), *notes]  # printed by `trainwell train`
        return bundle

    def build_model(self, config: Config, bundle: DataBundle) -> nn.Module:
        from trainwell.models.embedding import build_embedding_model

        return build_embedding_model(config.model, config.embedding, bundle.input_shape)

    def build_loss(self, config: Config, bundle: DataBundle) -> nn.Module:
        emb = config.embedding
        if emb.loss == "triplet":
            from trainwell.losses.triplet import BatchHardTripletLoss

            return BatchHardTripletLoss(emb.margin)
        from trainwell.losses.arcface import ArcFaceLoss

        return ArcFaceLoss(emb.dim, bundle.info["train_identities"], margin=emb.margin, scale=emb.scale)

    def metric(self, config: Config, bundle: DataBundle) -> Callable[[], Metric]:
        from trainwell.verification.metric import VerificationMetric

        return partial(VerificationMetric, config.embedding.pairs, config.data.split_seed)

    def payload(self, config: Config, bundle: DataBundle) -> dict[str, Any]:
        data = super().payload(config, bundle)
        data.update({"task": "embedding", "embedding_dim": config.embedding.dim,
                     "protocol": config.embedding.protocol})
        return data

    def finish(self, trainer: Trainer, bundle: DataBundle, config: Config,
               run_dir: Path) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        from trainwell.verification.evaluate import embed_split, verification_report
        from trainwell.verification.report import baseline_entries, verification_sections

        _, eval_transform = self.transforms(config, bundle)
        val = embed_split(trainer.model, bundle.val, eval_transform, trainer.device)
        test = embed_split(trainer.model, bundle.test, eval_transform, trainer.device)
        summary, methods = verification_report(val, test, config.embedding.pairs, config.data.split_seed)
        summary.update({"task": "embedding", "protocol": config.embedding.protocol,
                        "embedding_loss": config.embedding.loss, "data_notes": bundle.info.get("notes", []),
                        **baseline_entries(summary)})
        _store_threshold(run_dir, summary)
        _print_figures(summary)
        note = (f"{config.embedding.protocol} protocol; {summary['test_pairs']} test pairs (half same identity); "
                f"threshold chosen on {summary['val_pairs']} validation pairs. Data: {bundle.info.get('source')}. "
                + " ".join(f"{n[0].upper()}{n[1:]}." for n in bundle.info.get("notes", [])))
        curves = {name: m.curve for name, m in methods.items()}
        return summary, verification_sections(summary, curves, note)


def _store_threshold(run_dir: Path, summary: dict[str, Any]) -> None:
    """Put the threshold into the checkpoints' data payload, so ``verify`` needs nothing else."""
    from trainwell.engine.checkpoint import atomic_save, load_checkpoint

    stored = {"threshold": summary["threshold"], "chosen_with": "best checkpoint, validation pairs",
              "test_auc": summary["test_auc"], "test_verify_accuracy": summary["test_verify_accuracy"]}
    for name in ("best.pt", "last.pt", "last.shards/trainer.pt"):  # (the last: an fsdp run's, beside its pieces)
        path = run_dir / "checkpoints" / name
        if path.is_file():
            ckpt = load_checkpoint(path)
            ckpt["data"]["verification"] = stored
            atomic_save(ckpt, path)


def _print_figures(s: dict[str, Any]) -> None:
    from rich.console import Console

    Console(stderr=True).print(
        f"verification on test pairs: AUC {s['test_auc']:.4f}, TAR@FAR1% {s['test_tar_at_far1']:.4f}, "
        f"accuracy {100 * s['test_verify_accuracy']:.2f}% at threshold {s['threshold']:.3f} | raw pixels: AUC "
        f"{s['pixel_test_auc']:.4f}, TAR@FAR1% {s['pixel_test_tar_at_far1']:.4f}, accuracy "
        f"{100 * s['pixel_test_verify_accuracy']:.2f}%", highlight=False, soft_wrap=True)
