// Planted bug: a host-to-device copy into a pointer that was already freed.
#include "check.cuh"

int main() {
  float host[256] = {0};
  float *dev;
  CHECK(cudaMalloc(&dev, sizeof(host)));
  CHECK(cudaFree(dev));
  CHECK(cudaMemcpy(dev, host, sizeof(host), cudaMemcpyHostToDevice));  // BUG
  std::puts("api_error done");
  return 0;
}
