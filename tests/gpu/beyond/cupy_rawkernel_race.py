"""Bug in a kernel compiled at run time: a CuPy RawKernel reads its
neighbours' shared-memory slots before __syncthreads. NVRTC compiles the
string from a temporary file, so the tool names /tmp/.../<hash>.cu."""
import cupy as cp

BLOCK_SUM = cp.RawKernel(r'''
extern "C" __global__
void block_sum(const float *x, float *out) {
    __shared__ float s[128];
    s[threadIdx.x] = x[blockIdx.x * 128 + threadIdx.x];
    // BUG: missing __syncthreads()
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int i = 0; i < 128; ++i) t += s[i];
        out[blockIdx.x] = t;
    }
}
''', 'block_sum', options=('-lineinfo',))


def main():
    x = cp.ones(128 * 4, dtype=cp.float32)
    out = cp.zeros(4, dtype=cp.float32)
    BLOCK_SUM((4,), (128,), (x, out))
    cp.cuda.Device().synchronize()
    print("sums", out.tolist())


if __name__ == "__main__":
    main()
