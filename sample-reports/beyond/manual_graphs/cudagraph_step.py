"""Correct: a training step captured by hand into a CUDA graph
(torch.cuda.graph, as PyTorch's CUDA-graphs recipe does), then replayed
with new data copied into its static inputs."""
import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
    ).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    static_x = torch.randn(32, 64, device="cuda")
    static_y = torch.randint(0, 10, (32,), device="cuda")
    # Warm-up on a side stream, as torch.cuda.graph requires.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(static_x), static_y).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = torch.nn.functional.cross_entropy(model(static_x), static_y)
        static_loss.backward()
        opt.step()
    for step in range(5):
        static_x.copy_(torch.randn(32, 64, device="cuda"))
        static_y.copy_(torch.randint(0, 10, (32,), device="cuda"))
        graph.replay()
    print(f"loss {static_loss.item():.4f}")


if __name__ == "__main__":
    main()
