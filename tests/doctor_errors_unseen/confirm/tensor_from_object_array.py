# source: https://github.com/georgian-io/Multimodal-Toolkit/issues/2
# original: TypeError: can't convert np.ndarray of type numpy.object_. The only supported types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.
# half: confirm
# cause mentions: astype|numeric
import numpy as np
import torch

cat_feats = np.array([[1, "red", 0.5], [0, "blue", 1.5]], dtype=object)  # a DataFrame's .values with a text column
for idx in range(len(cat_feats)):
    item = torch.tensor(cat_feats[idx]).float()  # <- fails
