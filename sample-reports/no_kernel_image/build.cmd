nvcc -lineinfo -gencode arch=compute_100\,code=sm_100 -o /tmp/cap/.bin/no_kernel_image /work/main/tests/gpu/no_kernel_image.cu 
