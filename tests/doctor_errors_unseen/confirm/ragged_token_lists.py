# source: https://github.com/DefuLi/Emotional-Analysis-Transformers2.0-Bert/issues/2
# original: ValueError: expected sequence of length 303 at dim 1 (got 304)
# half: confirm
# cause mentions: pad
import torch

texts = ["good movie", "a bad one", "not my taste at all"]
vocab: dict[str, int] = {}
text_list = [[vocab.setdefault(w, len(vocab)) for w in t.split()] for t in texts]  # no padding
text_tensor = torch.tensor(text_list)  # <- fails
