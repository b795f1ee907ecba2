"""Word vectors from the training texts alone: co-occurrence counts -> positive PMI -> truncated SVD.

``text.pretrain: ppmi`` initialises the ``lstm`` / ``gru`` embedding with these vectors (still
fine-tuned). Only the training split's token ids are read, so nothing leaks from validation or test,
and no external data is used. The result is deterministic (fixed SVD seed) and takes a few seconds.

Recipe (Levy, Goldberg & Dagan 2015): counts of (word, context) pairs within ``window`` tokens of each
other inside one text, weighted 1 / distance; PPMI with context-distribution smoothing (counts^0.75);
SVD to ``dim`` dimensions; vectors U * sqrt(S), rescaled to unit standard deviation per entry (the
scale of PyTorch's default ``nn.Embedding`` initialisation). ``<pad>`` (id 0) stays zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from trainwell.data.vocab import PAD_ID

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix


def cooccurrence(texts: Sequence[torch.Tensor], vocab_size: int, window: int = 5) -> csr_matrix:
    """Symmetric (vocab_size, vocab_size) counts of token pairs at most ``window`` apart, weighted 1 / distance."""
    from scipy import sparse

    ids = np.concatenate([t.numpy() for t in texts]) if texts else np.zeros(0, dtype=np.int64)
    doc = np.repeat(np.arange(len(texts)), [len(t) for t in texts])
    rows, cols, vals = [], [], []
    for d in range(1, window + 1):
        same = doc[d:] == doc[:-d]  # both tokens in the same text
        a, b = ids[:-d][same], ids[d:][same]
        keep = (a != PAD_ID) & (b != PAD_ID)
        a, b = a[keep], b[keep]
        rows += [a, b]
        cols += [b, a]
        vals += [np.full(2 * len(a), 1.0 / d)]
    m = sparse.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                          shape=(vocab_size, vocab_size), dtype=np.float64)
    return m.tocsr()  # duplicates summed


def ppmi(counts: csr_matrix, alpha: float = 0.75) -> csr_matrix:
    """Positive pointwise mutual information, contexts' distribution smoothed by ``alpha``."""
    from scipy import sparse

    total = counts.sum()
    if total == 0:
        return sparse.csr_matrix(counts.shape)
    w = np.asarray(counts.sum(axis=1)).ravel()
    c = np.asarray(counts.sum(axis=0)).ravel() ** alpha
    coo = counts.tocoo()
    pmi = np.log(coo.data * c.sum() / (w[coo.row] * c[coo.col]))
    keep = pmi > 0
    return sparse.csr_matrix((pmi[keep], (coo.row[keep], coo.col[keep])), shape=counts.shape)


def ppmi_embeddings(texts: Sequence[torch.Tensor], vocab_size: int, dim: int, *, window: int = 5,
                    seed: int = 0) -> torch.Tensor:
    """A (vocab_size, dim) float32 tensor: SVD of the training texts' PPMI matrix; row ``<pad>`` is zero.

    Tokens never seen next to another (and any dimensions beyond the matrix rank) get zero vectors.
    """
    from sklearn.decomposition import TruncatedSVD

    m = ppmi(cooccurrence(texts, vocab_size, window))
    k = min(dim, vocab_size - 1)
    out = np.zeros((vocab_size, dim), dtype=np.float64)
    if k >= 1 and m.nnz:
        svd = TruncatedSVD(n_components=k, algorithm="randomized", n_iter=5, random_state=seed)
        u_s = svd.fit_transform(m)  # U * S
        vec = u_s / np.sqrt(np.maximum(svd.singular_values_, 1e-12))  # U * sqrt(S)
        # the sign of each singular vector is arbitrary; fix it so the largest entry is positive
        vec *= np.where(vec[np.abs(vec).argmax(0), np.arange(k)] < 0, -1.0, 1.0)
        out[:, :k] = vec
    out[PAD_ID] = 0.0
    std = out[1:].std()
    if std > 0:
        out /= std
    return torch.from_numpy(out.astype(np.float32))
