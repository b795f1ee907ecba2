# source: https://github.com/clive819/Modified-DETR/issues/8
# original: RuntimeError: shape mismatch: value tensor of shape [92] cannot be broadcast to indexing result of shape [40]
# half: tune
# cause mentions: 92
import torch

torch.manual_seed(0)
num_queries, num_classes = 40, 5
logits = torch.randn(2, num_queries, num_classes + 1)
target_classes_o = torch.randint(0, num_classes, (92,))  # more objects than queries
idx = (torch.zeros(num_queries, dtype=torch.long), torch.arange(num_queries))
target_classes = torch.full(logits.shape[:2], num_classes, dtype=torch.long)
target_classes[idx] = target_classes_o  # <- fails
loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), target_classes)
