"""Bug in the user's part: token ids built one past the vocabulary, so
ATen's embedding kernel trips its device-side index assert."""
import torch


def main():
    torch.manual_seed(0)
    vocab = 100
    emb = torch.nn.Embedding(vocab, 16).cuda()
    ids = torch.arange(1, vocab + 1, device="cuda")  # BUG: ids run to vocab, not vocab - 1
    out = emb(ids)
    torch.cuda.synchronize()
    print("sum", out.sum().item())


if __name__ == "__main__":
    main()
