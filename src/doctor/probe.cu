// cudawatch doctor's probe: one allocation, one kernel, one sync.
__global__ void probe(int *p) { p[threadIdx.x] = threadIdx.x; }
int main() {
    int *d = nullptr;
    if (cudaMalloc(&d, 32 * sizeof(int)) != cudaSuccess) return 2;
    probe<<<1, 32>>>(d);
    if (cudaDeviceSynchronize() != cudaSuccess) return 3;
    cudaFree(d);
    return 0;
}
