"""Correct: a CuPy pipeline: an elementwise kernel, a cuBLAS matmul, a
reduction."""
import cupy as cp


def main():
    a = cp.random.rand(256, 256, dtype=cp.float32)
    b = cp.random.rand(256, 256, dtype=cp.float32)
    scaled = cp.ElementwiseKernel("float32 x", "float32 y", "y = 2.0f * x", "scale")(a)
    c = scaled @ b
    print("sum", float(c.sum()))


if __name__ == "__main__":
    main()
