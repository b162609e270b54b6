"""Do host-API records keep host stacks? D2H: main 4096, Python thread 8192, autograd 12288; D2D (clone): main 16384, autograd 20480"""
import threading, torch
def copy(n):
    return torch.empty(n // 4, device="cuda").cpu()
def clone(n):
    return torch.empty(n // 4, device="cuda").clone()
copy(4096)
t = threading.Thread(target=copy, args=(8192,)); t.start(); t.join()
clone(16384)
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x): return x * 2
    @staticmethod
    def backward(ctx, g):
        copy(12288)
        clone(20480)
        return g * 2
x = torch.ones(8, device="cuda", requires_grad=True)
F.apply(x).sum().backward()
torch.cuda.synchronize(); print("done")
