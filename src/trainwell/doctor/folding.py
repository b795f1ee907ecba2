"""A root cause and its symptoms are one finding: the cause, naming the symptoms it explains.

A script that never calls ``zero_grad()`` sums every past gradient into each step: its loss blows up and its
gradients grow, so ``lr-too-high`` and ``exploding-gradients`` fire as well. Reported separately, they come with
their own fixes (a smaller rate, clipping) that treat the symptom. ``SYMPTOMS`` says, per cause, which other
findings it explains; when a cause and some of its symptoms are both found, the symptoms are folded into the cause:
its evidence lists them under ``"symptoms"`` (each symptom's own finding, id and all, so the ids stay in the JSON),
and the printed finding names them ("also seen: the loss blew up (lr-too-high) ... symptoms of this"). A symptom
found without its cause stays a finding of its own: folding never hides a bug that is only the symptom.

Only causes that are certain when found are listed, and each at least as severe as what it folds
(``tests/test_doctor_advice.py`` holds the table to that). Folding is transitive: a too-high rate explains an
inf loss, and a missing ``zero_grad()`` explains both, so all three fold into ``zero-grad-missing``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from trainwell.doctor.findings import Finding
from trainwell.doctor.lang import pick

# cause id -> the ids of the findings it explains when both are found (its symptoms).
SYMPTOMS: dict[str, tuple[str, ...]] = {
    # Gradients summed over all past steps: each update grows, as with a far too high rate.
    "zero-grad-missing": ("lr-too-high", "exploding-gradients", "nonfinite-loss", "loss-not-decreasing",
                          "dead-relu", "lr-too-high-for-finetuning"),
    # The step uses zeros, or only the last loss's gradients: the weights do not learn.
    "zero-grad-misplaced": ("loss-not-decreasing", "params-not-updating", "lr-too-low"),
    # A softmax (or sigmoid) before a loss that applies its own: gradients squashed, the loss stuck high.
    "softmax-before-cross-entropy": ("loss-not-decreasing", "lr-too-low", "vanishing-gradients",
                                     "saturated-activations"),
    "sigmoid-before-bce-with-logits": ("loss-not-decreasing", "lr-too-low", "vanishing-gradients",
                                       "saturated-activations"),
    # New parameters every step (made inside the loop), or parameters the optimizer never sees: no learning.
    # (A new model and optimizer each step: the new model's parameters meet backward() before their optimizer
    # steps, so params-not-in-optimizer sees them unowned.)
    "params-recreated": ("loss-not-decreasing", "lr-too-low", "params-not-updating", "params-not-in-optimizer"),
    # (Not loss-not-decreasing: the corpus's model rebuilt after its optimizer is that case's own bug, and both fire.)
    "params-not-in-optimizer": ("lr-too-low",),
    # Each update overshoots: the loss becomes inf / NaN. Not exploding-gradients: a large initialisation or an RNN
    # explodes by itself and its rate looks too high too (tests/doctor_cases keeps both). Not dead-relu: raw-scale
    # targets or a large negative bias kill ReLUs with the rate looking too high, and their fix is another
    # (tests/doctor_heldout's regression_raw_target_kills_relus).
    "lr-too-high": ("nonfinite-loss", "loss-not-decreasing"),
    # A pretrained model's loss climbing far above its start at the fine-tuning rate: the general rate check sees the
    # same run from its larger rise on; the fine-tuning finding's fix (a 10x smaller rate, a smaller one for the
    # pretrained part) is the one to follow.
    "lr-too-high-for-finetuning": ("lr-too-high", "nonfinite-loss", "loss-not-decreasing"),
    # NaN / inf in the data make the loss NaN; nothing else need be wrong.
    "nonfinite-input": ("nonfinite-loss", "exploding-gradients", "loss-not-decreasing"),
}

# What each symptom looked like, in a few words (en, zh).
SYMPTOM_WORDS: dict[str, tuple[str, str]] = {
    "lr-too-high": ("the loss blew up as with a far too high learning rate", "损失像学习率过高那样暴涨"),
    "lr-too-high-for-finetuning": ("the loss climbed above where fine-tuning started", "损失升到了微调起点之上"),
    "exploding-gradients": ("the gradients grew huge", "梯度变得极大"),
    "nonfinite-loss": ("the loss became inf / NaN", "损失变成了 inf / NaN"),
    "loss-not-decreasing": ("the loss did not go down", "损失没有下降"),
    "dead-relu": ("ReLU units died", "ReLU 单元死亡"),
    "params-not-updating": ("the weights did not change", "权重没有变化"),
    "params-not-in-optimizer": ("parameters got gradients that no optimizer owned", "参数有梯度却不属于任何优化器"),
    "lr-too-low": ("the loss fell as slowly as with a too low learning rate", "损失像学习率过低那样下降缓慢"),
    "vanishing-gradients": ("the gradients were tiny", "梯度极小"),
    "saturated-activations": ("activations were saturated", "激活值饱和"),
}

_NOTE = {
    "en": ("also seen: {symptoms}. These are symptoms of this problem, not separate ones: fixing it fixes them.",
           "{symptom} ({id}): a symptom of {cause} above; its fix is that one."),
    "zh": ("同时观察到：{symptoms}。这些是这个问题的症状，不是另外的问题：修复它，这些也会消失。",
           "{symptom}（{id}）：是上面 {cause} 的症状；修复方法见那一条。"),
}


def _root(finding_id: str, present: set[str]) -> str | None:
    """The outermost cause found that explains ``finding_id`` (None: it is not a symptom of anything found)."""
    cause = next((c for c, symptoms in SYMPTOMS.items() if finding_id in symptoms and c in present), None)
    if cause is None:
        return None
    return _root(cause, present) or cause  # the table is acyclic (tested): this ends


def fold_symptoms(findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` with each symptom whose cause was found folded into that cause (listed under its evidence's
    ``"symptoms"``, in the order found); the order of the rest is kept. The findings given are not changed: a
    cause with symptoms is a copy. A cause that already lists symptoms (a resumed run's) keeps them."""
    findings = list(findings)
    present = {f.id for f in findings} | {s["id"] for f in findings for s in _listed(f)}
    folded: dict[str, list[Finding]] = {}
    kept: list[Finding] = []
    for f in findings:
        root = _root(f.id, present)
        if root is None or root == f.id:
            kept.append(f)
        else:
            folded.setdefault(root, []).append(f)
    out = []
    for f in kept:
        extra = folded.get(f.id)
        if extra:
            listed = _listed(f) + [s.to_dict() for s in extra]
            f = replace(f, evidence={**f.evidence, "symptoms": listed})
        out.append(f)
    return out


def _listed(finding: Finding) -> list[dict[str, Any]]:
    symptoms = finding.evidence.get("symptoms") if isinstance(finding.evidence, dict) else None
    return [s for s in symptoms if isinstance(s, dict) and "id" in s] if isinstance(symptoms, list) else []


def unfold(findings: Iterable[Finding]) -> list[Finding]:
    """The inverse of ``fold_symptoms``: each folded symptom a finding of its own again (a resumed run reads its
    earlier doctor.json back this way, so that its checks know what was already reported)."""
    out: list[Finding] = []
    for f in findings:
        listed = _listed(f)
        if listed:
            evidence = {k: v for k, v in f.evidence.items() if k != "symptoms"}
            out.append(replace(f, evidence=evidence))
            out.extend(Finding(**s) for s in listed)
        else:
            out.append(f)
    return out


def symptom_ids(finding: Finding) -> list[str]:
    """The ids folded into ``finding`` (none for a finding that is not a cause of others found)."""
    return [s["id"] for s in _listed(finding)]


def describe(symptom_id: str, lang: str) -> str:
    return pick(lang, *SYMPTOM_WORDS.get(symptom_id, (symptom_id, symptom_id)))


def symptoms_note(ids: list[str], lang: str) -> str:
    """"also seen: the gradients grew huge (exploding-gradients), ... symptoms of this" for a cause's block."""
    sep = "；" if lang == "zh" else "; "
    listed = sep.join(f"{describe(i, lang)} ({i})" if lang != "zh" else f"{describe(i, lang)}（{i}）" for i in ids)
    return _NOTE.get(lang, _NOTE["en"])[0].format(symptoms=listed)


def symptom_line(symptom_id: str, cause_id: str, lang: str) -> str:
    """One line for a symptom found after its cause was printed: it names the cause instead of a fix of its own."""
    return _NOTE.get(lang, _NOTE["en"])[1].format(symptom=describe(symptom_id, lang), id=symptom_id, cause=cause_id)


class LiveFolding:
    """The callback that prints each finding as it is found, with folding: a symptom of a cause already printed
    gets one line naming that cause (not a block with a fix of its own); a cause found after some of its symptoms
    were printed names them. ``show(finding, also)`` prints a whole finding (``also``: the symptom ids it
    explains); ``line(text)`` prints one line."""

    def __init__(self, show: Callable[[Finding, list[str]], None], line: Callable[[str], None], lang: str) -> None:
        self.show = show
        self.line = line
        self.lang = lang
        self.seen: list[str] = []

    def __call__(self, finding: Finding) -> None:
        present = {*self.seen, finding.id}
        self.seen.append(finding.id)
        root = _root(finding.id, present)
        if root is not None and root != finding.id:
            self.line(symptom_line(finding.id, root, self.lang))
            return
        explained = [i for i in self.seen[:-1] if _root(i, present) == finding.id]
        self.show(finding, explained)
