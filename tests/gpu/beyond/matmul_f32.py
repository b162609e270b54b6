import torch
a = torch.randn(1024, 1024, device="cuda")
b = torch.randn(1024, 1024, device="cuda")
torch.backends.cuda.matmul.allow_tf32 = False
c = a @ b
torch.cuda.synchronize()
print("matmul done", tuple(c.shape))
