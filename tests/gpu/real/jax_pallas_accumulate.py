"""A bug in the user's part of a JAX program: a Pallas kernel (lowered
through Triton on the GPU) accumulates into its output block without first
zeroing it, so every element's first read is of memory nobody wrote. Before
it, the program makes and drops an array of the output's size, as a training
loop does: plainly, XLA's pool hands the kernel that array's memory and the
sum comes out wrong (25161824 for 8192 on the H100). `FIXED=1` zeroes the
block first."""

import os

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

N = 4096
BLOCK = 512
FIXED = os.environ.get("FIXED") == "1"


def scale_kernel(x_ref, o_ref):
    if FIXED:
        o_ref[...] = jnp.zeros_like(x_ref[...])
    o_ref[...] += x_ref[...] * 2.0


@jax.jit
def scale(x):
    return pl.pallas_call(
        scale_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(N // BLOCK,),
        in_specs=[pl.BlockSpec((BLOCK,), lambda i: (i,))],
        out_specs=pl.BlockSpec((BLOCK,), lambda i: (i,)),
    )(x)


def main():
    earlier = (jnp.arange(N, dtype=jnp.float32) * 3.0).block_until_ready()
    del earlier
    x = jnp.ones(N, dtype=jnp.float32)
    y = scale(x)
    print("sum", float(jnp.sum(y)), "expected", 2.0 * N, flush=True)


if __name__ == "__main__":
    main()
