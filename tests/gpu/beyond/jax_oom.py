"""A JAX program that asks for more GPU memory than there is: a batch of
activations sized for a larger GPU (2000 x 4096 x 4096 float32, 125 GiB),
then a step over it. XLA raises RESOURCE_EXHAUSTED when the batch is made.
(Made inside a jitted step, XLA fuses the batch into its consumer and never
holds it: that program runs.)"""

import jax
import jax.numpy as jnp

BATCH = 2000


@jax.jit
def step(x, w):
    return jnp.sum(x @ w)


def main():
    w = jnp.ones((4096, 16), jnp.float32)
    x = jax.random.normal(jax.random.PRNGKey(0), (BATCH, 4096, 4096), jnp.float32)
    print("loss", float(step(x, w)), flush=True)


if __name__ == "__main__":
    main()
