"""Train the small GPT of model.py on characters of a short text: two files, so the profile shows which line of
which file costs what. Runs on the CPU in seconds and on the GPU when torch has one. Try:
    flagprof profile -- examples/gpt/train.py --steps 20
"""

import argparse

import torch

from model import GPT

TEXT = (
    "Which line of your code costs which kernels? A profiler that answers it points at the expression: "
    "the matmul of the attention scores, the residual add, the backward pass and the optimizer step. "
)


def batches(data, block, batch, device):
    """Random windows of the text: inputs and the same windows shifted by one character as targets."""
    starts = torch.randint(len(data) - block - 1, (batch,))
    x = torch.stack([data[s : s + block] for s in starts])
    y = torch.stack([data[s + 1 : s + block + 1] for s in starts])
    return x.to(device), y.to(device)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--block", type=int, default=32)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    chars = sorted(set(TEXT))
    data = torch.tensor([chars.index(ch) for ch in TEXT], dtype=torch.long)
    model = GPT(vocab=len(chars), block=args.block).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)

    for step in range(args.steps):
        x, y = batches(data, args.block, args.batch, device)
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 5 == 0 or step == args.steps - 1:
            print(f"step {step:3d}  loss {loss.item():.4f}  ({device})")


if __name__ == "__main__":
    main()
