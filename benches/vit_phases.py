"""tests/gpu/real/vit_tiny_step.py's step with each phase stamped on
stderr (seconds since the interpreter started), for benches/stage-costs.sh
racecheck-phases: where a tool's time goes between import, the model's
first CUDA use, forward, backward, the optimizer step and exit."""
import sys
import time

T0 = time.monotonic()


def stamp(what):
    print(f"phase {what} {time.monotonic() - T0:.2f}", file=sys.stderr, flush=True)


import torch  # noqa: E402

stamp("import-torch")
import timm  # noqa: E402

stamp("import-timm")


def main():
    torch.manual_seed(0)
    model = timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=10).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(8, 3, 224, 224, device="cuda")
    y = torch.randint(0, 10, (8,), device="cuda")
    torch.cuda.synchronize()
    stamp("model-on-gpu")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    torch.cuda.synchronize()
    stamp("forward")
    loss.backward()
    torch.cuda.synchronize()
    stamp("backward")
    opt.step()
    torch.cuda.synchronize()
    stamp("optimizer-step")
    print(f"loss {loss.item():.4f}")
    # A second step: what the first step's kernels cost once they are
    # loaded (and, under a tool, instrumented).
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    stamp("second-step")


if __name__ == "__main__":
    main()
    stamp("exit")
