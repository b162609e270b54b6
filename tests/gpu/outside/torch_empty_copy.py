"""Bug in the user's part: a buffer made with torch.empty, half of it
filled, and the whole of it copied to the host: the copy reads memory
nobody wrote (initcheck's "Host API uninitialized memory access", at the
user's line through the copy's Python frame)."""
import torch


def main():
    buf = torch.empty(4096, device="cuda")
    buf[:2048] = 1.0
    host = buf.cpu()  # BUG: buf[2048:] was never written
    print("sum", float(host[:2048].sum()))


if __name__ == "__main__":
    main()
