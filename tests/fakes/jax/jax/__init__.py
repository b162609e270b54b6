# A stand-in for JAX in cudawatch's tests: only that it was imported
# matters (cudawatch's hook reports it; the stages' XLA settings concern it).
__version__ = "0.0+fake"
