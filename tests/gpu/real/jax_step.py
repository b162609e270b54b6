"""Correct: a small MLP trained for a few steps in JAX (jit, grad, a
hand-written SGD update). XLA's own kernels only; nothing of the user's runs
on the GPU outside XLA. cudawatch must come out conclusive on it."""

import os

import jax
import jax.numpy as jnp

STEPS = int(os.environ.get("STEPS", "5"))


def init(key, sizes):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        params.append((jax.random.normal(sub, (fan_in, fan_out)) / fan_in**0.5, jnp.zeros(fan_out)))
    return params


def forward(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y):
    return jnp.mean((forward(params, x) - y) ** 2)


@jax.jit
def step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)], value


def main():
    key = jax.random.PRNGKey(0)
    params = init(key, [256, 512, 512, 10])
    x = jax.random.normal(key, (128, 256))
    y = jax.random.normal(key, (128, 10))
    for i in range(STEPS):
        params, value = step(params, x, y)
        print(f"step {i} loss {float(value):.4f}", flush=True)
    print("devices", jax.devices())


if __name__ == "__main__":
    main()
