"""Small JAX models shared by the model tests and bench/jax_bench.py (plain jax.numpy, no
libraries): an MLP, a conv net, a transformer block and a scan-heavy recurrent model, each with
an init, a loss and an SGD training step."""
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax


def _dense(rng, n_in, n_out):
    return {"w": (rng.randn(n_in, n_out) / np.sqrt(n_in)).astype(np.float32),
            "b": np.zeros((n_out,), np.float32)}


def sgd_step(loss):
    """A jitted-able train step: (params, *batch) -> (new params, loss)."""
    def step(params, *batch):
        l, g = jax.value_and_grad(loss)(params, *batch)
        return jax.tree.map(lambda p, d: p - 0.05 * d, params, g), l
    return step


# ---- MLP ----

def mlp_init(sizes=(32, 64, 64, 10), seed=0):
    rng = np.random.RandomState(seed)
    return [_dense(rng, a, b) for a, b in zip(sizes[:-1], sizes[1:])]


def mlp_apply(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def mlp_loss(params, x, y):
    logits = mlp_apply(params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, logits.shape[-1]), -1))


def mlp_batch(n=16, d=32, classes=10, seed=1):
    rng = np.random.RandomState(seed)
    return rng.randn(n, d).astype(np.float32), rng.randint(0, classes, n).astype(np.int32)


# ---- conv net (NHWC) ----

def conv_init(seed=0, cin=3, c1=8, c2=16, classes=10, hw=16):
    rng = np.random.RandomState(seed)
    return {"k1": (rng.randn(3, 3, cin, c1) * 0.2).astype(np.float32),
            "k2": (rng.randn(3, 3, c1, c2) * 0.1).astype(np.float32),
            "out": _dense(rng, c2 * (hw // 4) * (hw // 4), classes)}


def _conv(x, k, stride=1):
    return lax.conv_general_dilated(x, k, (stride, stride), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _avg_pool2(x):
    return lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0


def conv_apply(params, x):
    x = _avg_pool2(jax.nn.relu(_conv(x, params["k1"])))
    x = _avg_pool2(jax.nn.relu(_conv(x, params["k2"])))
    x = x.reshape(x.shape[0], -1)
    return x @ params["out"]["w"] + params["out"]["b"]


def conv_loss(params, x, y):
    logits = conv_apply(params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, logits.shape[-1]), -1))


def conv_batch(n=4, hw=16, cin=3, classes=10, seed=1):
    rng = np.random.RandomState(seed)
    return rng.randn(n, hw, hw, cin).astype(np.float32), rng.randint(0, classes, n).astype(np.int32)


# ---- transformer block: causal multi-head attention + layer norm + GELU MLP ----

def tfm_init(d=32, heads=4, ff=64, seed=0):
    rng = np.random.RandomState(seed)
    p = {k: _dense(rng, d, d) for k in ("q", "k", "v", "o")}
    p["ff1"], p["ff2"] = _dense(rng, d, ff), _dense(rng, ff, d)
    for k in ("ln1", "ln2"):
        p[k] = {"g": np.ones((d,), np.float32), "b": np.zeros((d,), np.float32)}
    p["heads"] = heads
    return p


def _layer_norm(x, p, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * lax.rsqrt(var + eps) * p["g"] + p["b"]


def tfm_apply(params, x):
    heads = params["heads"]
    b, t, d = x.shape
    h = _layer_norm(x, params["ln1"])

    def proj(name):
        y = h @ params[name]["w"] + params[name]["b"]
        return y.reshape(b, t, heads, d // heads).transpose(0, 2, 1, 3)

    q, k, v = proj("q"), proj("k"), proj("v")
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(d // heads).astype(np.float32)
    mask = jnp.tril(jnp.ones((t, t), bool))
    scores = jnp.where(mask, scores, -1e9)
    att = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, -1), v)
    att = att.transpose(0, 2, 1, 3).reshape(b, t, d)
    x = x + att @ params["o"]["w"] + params["o"]["b"]
    h = _layer_norm(x, params["ln2"])
    h = jax.nn.gelu(h @ params["ff1"]["w"] + params["ff1"]["b"])
    return x + h @ params["ff2"]["w"] + params["ff2"]["b"]


def tfm_loss(params, x, y):
    return jnp.mean((tfm_apply(params, x) - y) ** 2)


def tfm_batch(b=2, t=16, d=32, seed=1):
    rng = np.random.RandomState(seed)
    return rng.randn(b, t, d).astype(np.float32), rng.randn(b, t, d).astype(np.float32)


def tfm_split(params):
    """(trainable params, static head count): jax.grad must not see the int."""
    p = dict(params)
    heads = p.pop("heads")
    return p, heads


# ---- a scan-heavy recurrent model (an RNN over a long sequence) ----

def rnn_init(d_in=8, d_h=32, seed=0):
    rng = np.random.RandomState(seed)
    return {"wx": _dense(rng, d_in, d_h), "wh": _dense(rng, d_h, d_h), "out": _dense(rng, d_h, 1)}


def rnn_apply(params, xs):
    def cell(h, x):
        h = jnp.tanh(x @ params["wx"]["w"] + h @ params["wh"]["w"] + params["wh"]["b"])
        return h, h @ params["out"]["w"] + params["out"]["b"]
    h0 = jnp.zeros((xs.shape[1], params["wh"]["w"].shape[0]), xs.dtype)
    _, ys = lax.scan(cell, h0, xs)
    return ys


def rnn_loss(params, xs, ys):
    return jnp.mean((rnn_apply(params, xs) - ys) ** 2)


def rnn_batch(t=64, b=4, d_in=8, seed=1):
    rng = np.random.RandomState(seed)
    return rng.randn(t, b, d_in).astype(np.float32), rng.randn(t, b, 1).astype(np.float32)
