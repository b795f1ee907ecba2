"""Loss functions beyond ``torch.nn``: multi-task weighting, metric learning (one file each)."""

from trainwell.losses.arcface import ArcFaceLoss
from trainwell.losses.multitask import MultiTaskLoss, UncertaintyWeighting
from trainwell.losses.triplet import BatchHardTripletLoss

__all__ = ["ArcFaceLoss", "BatchHardTripletLoss", "MultiTaskLoss", "UncertaintyWeighting"]
