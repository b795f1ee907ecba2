# source: https://github.com/HUST-NingKang-Lab/MGM/issues/2
# original: ValueError: Sum of input lengths does not equal the length of the input dataset!
# half: tune
# cause mentions: sum|fraction
import torch
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)
corpus = torch.randn(385, 10)
dataset = TensorDataset(corpus, torch.randint(0, 2, (385,)))
split = 0.1
train_set, val_set = random_split(dataset, [int(len(corpus) * (1 - split)), int(len(corpus) * split)])  # <- fails
loader = DataLoader(train_set, batch_size=32, shuffle=True)
