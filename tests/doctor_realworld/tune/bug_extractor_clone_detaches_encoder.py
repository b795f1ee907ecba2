# expect: grad-none
# source: https://github.com/lucidrains/CoCa-pytorch/issues/6
# The image encoder is wrapped in an Extractor that returns its embeddings with .clone().detach(), so no gradient propagates back to the image encoder during captioning training.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ViT(nn.Module):
    def __init__(self, dim=64, patch=8):
        super().__init__()
        self.to_patch = nn.Conv2d(3, dim, patch, stride=patch)
        self.layer = nn.TransformerEncoderLayer(dim, 4, 128, batch_first=True)

    def forward(self, img):
        return self.layer(self.to_patch(img).flatten(2).transpose(1, 2))


class Extractor(nn.Module):
    def __init__(self, vit):
        super().__init__()
        self.vit = vit

    def forward(self, img):
        embeddings = self.vit(img)
        return embeddings.clone().detach()


class CoCa(nn.Module):
    def __init__(self, img_encoder, dim=64, num_tokens=50):
        super().__init__()
        self.img_encoder = img_encoder
        self.token_emb = nn.Embedding(num_tokens, dim)
        self.cross = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.to_logits = nn.Linear(dim, num_tokens)

    def forward(self, text, images):
        image_tokens = self.img_encoder(images)
        x = self.token_emb(text[:, :-1])
        x = x + self.cross(x, image_tokens, image_tokens)[0]
        logits = self.to_logits(x)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), text[:, 1:].reshape(-1))


coca = CoCa(Extractor(ViT()))
optimizer = torch.optim.Adam(coca.parameters(), lr=3e-4)
for step in range(30):
    images = torch.randn(8, 3, 32, 32)
    text = torch.randint(0, 50, (8, 12))
    loss = coca(text, images)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())
