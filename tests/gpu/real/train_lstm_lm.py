"""Correct: an ordinary word-level language model, as the PyTorch examples
write one: an embedding, a two-layer LSTM (cuDNN's RNN kernels) and a tied
decoder, trained with truncated backpropagation through time on a random
corpus, gradient clipping and Adam, 300 steps, a log line every 50."""
import argparse
import math
import time

import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nlayers, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, ninp, nlayers, dropout=dropout)
        self.decoder = nn.Linear(ninp, ntoken)
        self.decoder.weight = self.encoder.weight

    def forward(self, tokens, hidden):
        emb = self.drop(self.encoder(tokens))
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(output)), hidden


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data[: nbatch * bsz].view(bsz, -1).t().contiguous()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--bptt", type=int, default=35)
    parser.add_argument("--batch-size", type=int, default=20)
    parser.add_argument("--vocab", type=int, default=10000)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda")
    corpus = torch.randint(0, args.vocab, (args.batch_size * args.bptt * 50 + 1,))
    train = batchify(corpus, args.batch_size).to(device)
    model = RNNModel(args.vocab, 256, 2).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    hidden = None
    model.train()
    start = time.time()
    i = 0
    for step in range(1, args.steps + 1):
        if i + 1 + args.bptt > train.size(0):
            i, hidden = 0, None
        data, target = train[i : i + args.bptt], train[i + 1 : i + 1 + args.bptt].reshape(-1)
        i += args.bptt
        if hidden is not None:
            hidden = tuple(h.detach() for h in hidden)
        optimizer.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, args.vocab), target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
        if step % 50 == 0:
            print(f"step {step:4d}  loss {loss.item():.3f}  ppl {math.exp(loss.item()):8.1f}  "
                  f"{time.time() - start:.1f}s", flush=True)
    print("done")


if __name__ == "__main__":
    main()
