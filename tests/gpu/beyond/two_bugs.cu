// Two independent bugs. scale() indexes a pitched matrix with the pitch in
// bytes where it needs elements (rows past the first quarter land beyond the
// allocation); sample() reads a small vector with a stride meant for another
// buffer. memcheck's default stops checking the context at the first bug, so
// the second is never seen; with --destroy-on-device-error kernel only the
// faulting kernel is stopped and both are found in one run.
#include "../check.cuh"

__global__ void scale(float *m, size_t pitch, int rows, int cols) {
  int r = blockIdx.x, c = threadIdx.x;
  if (r < rows && c < cols) m[r * pitch + c] *= 2.f;  // BUG 1: pitch is in bytes
}

__global__ void sample(const float *v, float *out, int n, int stride) {
  int i = threadIdx.x;
  if (i < n) out[i] = v[i * stride];  // BUG 2: v has n elements, not n * stride
}

int main() {
  const int rows = 8, cols = 32, n = 32, stride = 256;
  float *m, *v, *out;
  size_t pitch;
  CHECK(cudaMallocPitch(&m, &pitch, cols * sizeof(float), rows));
  CHECK(cudaMalloc(&v, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  CHECK(cudaMemset2D(m, pitch, 0, cols * sizeof(float), rows));
  CHECK(cudaMemset(v, 0, n * sizeof(float)));
  scale<<<rows, cols>>>(m, pitch, rows, cols);
  sample<<<1, n>>>(v, out, n, stride);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(m));
  CHECK(cudaFree(v));
  CHECK(cudaFree(out));
  std::puts("two_bugs done");
  return 0;
}
