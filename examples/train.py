"""A small real training loop to profile: an MLP with a self-attention block on synthetic data.

Runs on the CPU in a few seconds and on the GPU when torch has one. Try:
    flagprof profile examples/train.py --steps 10
"""

import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        batch, tokens, dim = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(batch, tokens, self.heads, dim // self.heads).transpose(1, 2)
        k = k.reshape(batch, tokens, self.heads, dim // self.heads).transpose(1, 2)
        v = v.reshape(batch, tokens, self.heads, dim // self.heads).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(dim // self.heads)
        weights = torch.softmax(scores, dim=-1)
        mixed = torch.matmul(weights, v).transpose(1, 2).reshape(batch, tokens, dim)
        return self.out(mixed)


class Model(nn.Module):
    def __init__(self, features, dim, heads, classes):
        super().__init__()
        self.embed = nn.Linear(features, dim)
        self.attention = SelfAttention(dim, heads)
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 4), nn.GELU(), nn.Linear(dim * 4, dim))
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        h = torch.relu(self.embed(x))
        h = self.norm(torch.add(h, self.attention(h)))
        h = torch.add(h, self.mlp(h))
        return self.head(torch.mean(h, dim=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--dim", type=int, default=64)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = Model(features=16, dim=args.dim, heads=4, classes=10).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    inputs = torch.randn(args.batch, args.tokens, 16, device=device)
    labels = torch.randint(0, 10, (args.batch,), device=device)

    for step in range(args.steps):
        logits = model(inputs)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 5 == 0 or step == args.steps - 1:
            print(f"step {step:3d}  loss {loss.item():.4f}  ({device})")


if __name__ == "__main__":
    main()
