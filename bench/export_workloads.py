#!/usr/bin/env python3
"""Exports the benchmark workloads (bench/workloads/*.mlir) from JAX, so that cjrt and XLA:CPU
run the same StableHLO. Needs jax; the exported files are checked in, so bench.py's cjrt part
does not. usage: python3 bench/export_workloads.py"""
import os
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_platforms", "cpu")
def export(f, *args, name, donate=()):
    txt = jax.jit(f, donate_argnums=donate).lower(*args).as_text(dialect="stablehlo")
    open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "workloads", f"{name}.mlir"), "w").write(txt)
    print(name, len(txt))
f32 = jnp.float32
S = jax.ShapeDtypeStruct
export(lambda a, b: a @ b, S((2048, 2048), f32), S((2048, 2048), f32), name="matmul_2048")
def mlp_loss(params, x, y):
    (w1, b1, w2, b2, w3, b3) = params
    h = jax.nn.relu(x @ w1 + b1)
    h = jax.nn.relu(h @ w2 + b2)
    logits = h @ w3 + b3
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.sum(logp * y, axis=-1))
def train_step(params, x, y):
    loss, g = jax.value_and_grad(mlp_loss)(params, x, y)
    return tuple(p - 0.01 * gp for p, gp in zip(params, g)), loss
params = (S((784, 1024), f32), S((1024,), f32), S((1024, 1024), f32), S((1024,), f32), S((1024, 10), f32), S((10,), f32))
export(train_step, params, S((256, 784), f32), S((256, 10), f32), name="mlp_train_step", donate=(0,))
export(lambda x, a, b, c: jnp.tanh(a * x + b) * c, S((16 * 1024 * 1024,), f32), S((), f32), S((), f32), S((), f32), name="ew_chain_16m")
export(lambda x: jnp.sum(x), S((16 * 1024 * 1024,), f32), name="reduce_16m")
export(lambda x, y: x + y, S((4,), f32), S((4,), f32), name="tiny_add")
def conv_layer(x, w, b):  # a 3x3 convolution layer: NHWC, SAME padding, bias, relu
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jax.nn.relu(y + b)
export(conv_layer, S((8, 56, 56, 64), f32), S((3, 3, 64, 64), f32), S((64,), f32), name="conv3x3_layer")
