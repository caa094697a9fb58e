"""Whole models on cjrt against XLA:CPU: several SGD training steps of an MLP, a conv net, a
transformer block and a recurrent (scan) model; parameters and losses compared after each."""
import functools

import numpy as np
import pytest

import jax
import jax.numpy as jnp

import jaxcheck
import jaxmodels as models

STEPS = 4


def _train(dev, loss, params, batch, static=None):
    step = jax.jit(models.sgd_step(loss))
    params = jax.device_put(params, dev)
    batch = jax.device_put(batch, dev)
    losses = []
    for _ in range(STEPS):
        params, l = step(params, *batch)
        losses.append(l)
    return jax.block_until_ready((params, losses))


def _compare_training(loss, params, batch, rtol=1e-4, atol=1e-5):
    cj, cpu = jaxcheck.cj(), jaxcheck.cpu()
    got_p, got_l = _train(cj, loss, params, batch)
    want_p, want_l = _train(cpu, loss, params, batch)
    for g, w in zip(jax.tree.leaves(got_p), jax.tree.leaves(want_p)):
        assert g.devices() == {cj}
        jaxcheck.assert_close(g, w, rtol=rtol, atol=atol, what="parameter")
    jaxcheck.assert_close(np.array(got_l), np.array(want_l), rtol=rtol, atol=atol, what="losses")
    assert float(got_l[-1]) < float(got_l[0])  # it learns


def test_mlp_training(cj):
    _compare_training(models.mlp_loss, models.mlp_init(), models.mlp_batch())


def test_mlp_inference_batch_sizes(cj):
    params = models.mlp_init()
    for n in (1, 7, 64):
        x, _ = models.mlp_batch(n=n)
        jaxcheck.compare(models.mlp_apply, params, x, rtol=1e-5, atol=1e-5)


def test_conv_net_training(cj):
    _compare_training(models.conv_loss, models.conv_init(), models.conv_batch())


def test_transformer_block_forward(cj):
    p, heads = models.tfm_split(models.tfm_init())
    f = lambda p, x: models.tfm_apply(dict(p, heads=heads), x)
    jaxcheck.compare(f, p, models.tfm_batch()[0], rtol=1e-4, atol=1e-5)


def test_transformer_block_training(cj):
    p, heads = models.tfm_split(models.tfm_init())
    loss = lambda p, x, y: models.tfm_loss(dict(p, heads=heads), x, y)
    _compare_training(loss, p, models.tfm_batch())


def test_rnn_scan_training(cj):
    _compare_training(models.rnn_loss, models.rnn_init(), models.rnn_batch())


def test_bf16_mlp_forward(cj):
    params = jax.tree.map(lambda a: a.astype(jnp.bfloat16), models.mlp_init())
    x, _ = models.mlp_batch()
    jaxcheck.compare(models.mlp_apply, params, x.astype(jnp.bfloat16), rtol=5e-2, atol=5e-2)
