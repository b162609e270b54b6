"""Bug on one rank: rank 1 normalises its batch on a side stream (to
overlap it with the forward) and uses it on the main stream without
waiting for the side stream."""
import torch

from common import batch, finish, log_loss, model_on, start

rank, world, device = start()
model = model_on(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
side = torch.cuda.Stream()
for step in range(3):
    x, y = batch(device)
    if rank == 1:
        with torch.cuda.stream(side):
            x = (x - x.mean()) / x.std()
        # BUG: missing torch.cuda.current_stream().wait_stream(side)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    log_loss(loss, rank, world, step)
finish()
