"""Planted bug: a cuBLAS GEMM called with a leading dimension smaller than the
matrix's row count, so cuBLAS returns CUBLAS_STATUS_INVALID_VALUE."""
import cupy
from cupy.cuda import cublas, device


def main():
    a = cupy.ones((64, 64), dtype=cupy.float32)
    b = cupy.ones((64, 64), dtype=cupy.float32)
    c = cupy.zeros((64, 64), dtype=cupy.float32)
    handle = device.get_cublas_handle()
    one = cupy.ones((), dtype=cupy.float32)
    zero = cupy.zeros((), dtype=cupy.float32)
    cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_DEVICE)
    # BUG: lda = 8 < m = 64
    cublas.sgemm(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, 64, 64, 64,
                 one.data.ptr, a.data.ptr, 8, b.data.ptr, 64, zero.data.ptr,
                 c.data.ptr, 64)
    cupy.cuda.Device().synchronize()
    print(float(c.sum()))


if __name__ == "__main__":
    main()
