"""Adds TensorFlow's HLO programs to tests/hlo/data (cases named tf_*), with TF CPU's outputs.

For each case NAME it builds a tf.function(f, jit_compile=True) and asks XLA's bridge for the
module it compiles for the case's arguments, f.experimental_get_compiler_ir(*args):
  NAME.pb            ...(stage="hlo_serialized"): the xla.HloModuleProto
  NAME.hlo           ...(stage="hlo"): the same module as HLO text
  NAME.in<i>.npy     the module's parameter i: first the function's arguments, then the
                     variables it captures (TF passes each resource it reads as one more
                     parameter, in the order of the concrete function's captured_inputs;
                     checked against the module's parameter shapes)
  NAME.out<i>.npy    what TF computes on the CPU: the function's results, then, for a function
                     that assigns variables, their new values (the bridge returns each updated
                     resource as one more element of the result tuple, in parameter order)
and one line per case in MANIFEST.tf (`NAME NUM_INPUTS NUM_OUTPUTS RTOL ATOL`, as MANIFEST).
The outputs come from running the same jit_compile function (TF's XLA:CPU) and are checked
against the plain (non-XLA) TF kernels' results within the case's tolerance.

Run with a venv holding tensorflow-cpu 2.21 (Keras 3):
  /work/venv-tf/bin/python tests/hlo/make_corpus_tf.py [NAME...]
(With NAMEs, only those cases are rewritten; their modules' names, which number the functions
TF traced before, then differ from a full run's.)
"""
import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

from corpus_files import write_case, write_manifest  # noqa: E402

PREFIX = "tf_"
rng = np.random.default_rng(4321)

CASES = []


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def i32(lo, hi, *shape):
    return rng.integers(lo, hi, size=shape, dtype=np.int32)


def case(name, *args, rtol=1e-5, atol=1e-5, updates=(), kernels_agree=True):
    """updates: a function giving the variables fn assigns (their new values are outputs too).
    kernels_agree=False: TF's own kernels compute other values (its stateless random numbers
    use another algorithm without XLA), so only the jit_compile outputs count."""
    def deco(fn):
        CASES.append((PREFIX + name, fn, args, rtol, atol, updates, kernels_agree))
        return fn
    return deco


keras.utils.set_random_seed(7)
dense = keras.Sequential([keras.Input((12,)), keras.layers.Dense(16, activation="relu"),
                          keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(5)])
conv = keras.Sequential([
    keras.Input((8, 8, 3)),
    keras.layers.Conv2D(6, 3, padding="same", activation="relu"),
    keras.layers.BatchNormalization(),
    keras.layers.MaxPooling2D(2),
    keras.layers.DepthwiseConv2D(3, padding="valid"),
    keras.layers.Conv2D(4, 1, strides=1),
    keras.layers.GlobalAveragePooling2D(),
    keras.layers.Dense(3, activation="softmax"),
])
# batch norm with statistics that are not the identity's
bn = conv.layers[1]
bn.moving_mean.assign(f32(6) * 0.1)
bn.moving_variance.assign(np.abs(f32(6)) + 0.5)
lstm = keras.layers.LSTM(4, return_sequences=True)
gru = keras.layers.GRU(3)
lstm.build((None, 5, 3))
gru.build((None, 5, 3))
train_model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(10, activation="relu"),
                                keras.layers.Dense(3)])


@case("keras_dense", f32(4, 12), rtol=1e-4, atol=1e-5)
def keras_dense(x):
    return dense(x, training=False)


@case("keras_conv", f32(2, 8, 8, 3), rtol=1e-4, atol=1e-5)
def keras_conv(x):
    return conv(x, training=False)


@case("train_step", f32(8, 6), i32(0, 3, 8), rtol=1e-4, atol=1e-5,
      updates=lambda: train_model.trainable_variables)
def train_step(x, y):
    """A GradientTape step: softmax cross-entropy, its gradient and an SGD update with
    momentum-free assign_sub; returns the loss and the gradients' global norm."""
    with tf.GradientTape() as tape:
        logits = train_model(x, training=True)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
    grads = tape.gradient(loss, train_model.trainable_variables)
    for v, g in zip(train_model.trainable_variables, grads):
        v.assign_sub(0.1 * g)
    return loss, tf.linalg.global_norm(grads)


@case("softmax_layernorm", f32(3, 5, 16), f32(16), f32(16), rtol=1e-4, atol=1e-5)
def softmax_layernorm(x, gamma, beta):
    mean, var = tf.nn.moments(x, axes=[-1], keepdims=True)
    ln = (x - mean) * tf.math.rsqrt(var + 1e-5) * gamma + beta
    return tf.nn.softmax(ln, axis=-1), tf.nn.log_softmax(x, axis=1), tf.reduce_logsumexp(x, 2)


@case("while_loop", f32(5), np.int32(7), rtol=1e-5, atol=1e-5)
def while_loop(x, n):
    """A counted loop carrying a vector and a scalar (Newton steps towards sqrt(|x| + 1))."""
    a = tf.abs(x) + 1.0

    def body(i, y, s):
        y = 0.5 * (y + a / y)
        return i + 1, y, s + tf.reduce_sum(y)

    _, y, s = tf.while_loop(lambda i, y, s: i < n, body, (tf.constant(0), a, tf.constant(0.0)))
    return y, s


@case("gather_scatter", f32(6, 4), i32(0, 6, 5), i32(0, 4, 5, 2), i32(0, 3, 6))
def gather_scatter(x, idx, idx2, seg):
    g = tf.gather(x, idx)
    gnd = tf.gather_nd(x, idx2)
    gb = tf.gather(x, idx2[:, 1], axis=1, batch_dims=0)
    sc = tf.tensor_scatter_nd_add(x, idx2, gnd * 2.0)
    seg_sum = tf.math.unsorted_segment_sum(x, seg, 3)
    seg_max = tf.math.unsorted_segment_max(x, seg, 3)
    oh = tf.one_hot(idx, 6, dtype=tf.float32)
    am = tf.argmax(x, axis=1, output_type=tf.int32)
    tv, ti = tf.math.top_k(x, 2)
    return g, gnd, gb, sc, seg_sum, seg_max, oh, am, tv, ti


@case("int_ops", i32(-40, 40, 5, 6), i32(1, 9, 5, 6))
def int_ops(a, b):
    return (tf.math.floordiv(a, b), tf.math.floormod(a, b), tf.truncatediv(a, b),
            tf.bitwise.bitwise_and(a, b), tf.bitwise.bitwise_xor(a, b),
            tf.bitwise.left_shift(b, 2), tf.bitwise.right_shift(a, 1), tf.math.cumsum(a, axis=1),
            tf.reduce_max(a, axis=0), tf.cast(a, tf.float32) / tf.cast(b, tf.float32),
            tf.where(a > b, a, b * 3), tf.math.count_nonzero(a > 0, axis=1),
            tf.cast(tf.cast(a, tf.uint8), tf.int32), tf.clip_by_value(a, -5, 5))


@case("reductions_shapes", f32(4, 6, 5), rtol=1e-4, atol=1e-5)
def reductions_shapes(x):
    t = tf.transpose(x, [2, 0, 1])
    r = tf.reshape(t, [5, 24])
    c = tf.concat([r[:, :3], tf.reverse(r[:, -3:], [1])], axis=1)
    p = tf.pad(c, [[1, 0], [0, 2]], constant_values=-1.0)
    return (tf.reduce_sum(x, [0, 2]), tf.reduce_mean(x, 1), tf.math.reduce_std(x, 2),
            tf.reduce_prod(x[:, :2, 0] * 0.5 + 1.0, 1), tf.reduce_min(x), tf.norm(x, axis=[1, 2]),
            tf.math.cumprod(x[0, :, 0] * 0.5 + 1.0), tf.reduce_any(x > 2.0, 0),
            tf.tile(x[:1, :2, :1], [2, 1, 3]), p)
# (tf.math.segment_sum is left out: TF has no XLA kernel for SegmentSum and will not compile it)


@case("cond_einsum", f32(3, 4), f32(4, 5), np.float32(0.5), rtol=1e-4, atol=1e-5)
def cond_einsum(a, b, t):
    """tf.cond on a runtime scalar (an HLO conditional), einsum and a batched matmul."""
    e = tf.einsum("ij,jk->ik", a, b)
    bm = tf.linalg.matmul(tf.stack([a, -a]), tf.stack([b, b * 2.0]), transpose_a=False)
    c = tf.cond(t > 0.0, lambda: tf.nn.sigmoid(e) * t, lambda: tf.nn.elu(e))
    d = tf.cond(t < 0.0, lambda: tf.reduce_sum(a), lambda: tf.reduce_max(b))
    return e, bm, c, d


@case("keras_lstm", f32(2, 5, 3), rtol=1e-4, atol=1e-5)
def keras_lstm(x):
    """A Keras LSTM layer over a sequence (a while loop over TensorLists) and a GRU cell's
    sequences, forward."""
    return lstm(x), gru(x)


@case("stateless_random", np.array([3, 11], np.int32), kernels_agree=False)
def stateless_random(seed):
    """Stateless uniform random numbers, float and int (TF lowers its Philox counter-based
    generator to plain HLO arithmetic; each more op adds about 100 KB, so there are two)."""
    u = tf.random.stateless_uniform([4, 6], seed, dtype=tf.float32)
    i = tf.random.stateless_uniform([5], seed + 1, minval=0, maxval=100, dtype=tf.int32)
    return u, i


@case("conv_transpose_resize", f32(1, 5, 5, 2), f32(3, 3, 4, 2), rtol=1e-4, atol=1e-5)
def conv_transpose_resize(x, w):
    ct = tf.nn.conv2d_transpose(x, w, [1, 10, 10, 4], strides=2, padding="SAME")
    # Bilinear by 2 only: by 3 (5 -> 15 columns) XLA:CPU (TF's jit_compile, and XLA's plugin
    # on this module) gives some columns the neighbouring pixel's value where TF's kernel and
    # cjrt agree. The module's source column is ceil((i + 0.5) * 0.333333343 - 1 - 0.5): in f32
    # the product rounds to 1.5 at i = 4 and the ceil is 0; unrounded (a fused multiply-add) it
    # is 1, which is probably what XLA's optimized arithmetic computes.
    up = tf.image.resize(x, [10, 10], method="bilinear")
    nn_up = tf.image.resize(x, [10, 10], method="nearest")
    pool = tf.nn.avg_pool2d(ct, 3, 2, "VALID")
    return ct, up, nn_up, pool


_spd = f32(4, 4)


@case("linalg_fft", _spd @ _spd.T + 4 * np.eye(4, dtype=np.float32), f32(4, 2), f32(2, 8),
      rtol=1e-4, atol=1e-4)
def linalg_fft(a, b, s):
    """Cholesky, triangular solves, a QR's R and real/complex FFTs."""
    chol = tf.linalg.cholesky(a)
    sol = tf.linalg.cholesky_solve(chol, b)
    tri = tf.linalg.triangular_solve(chol, b, lower=True, adjoint=True)
    r = tf.abs(tf.linalg.qr(a)[1])
    spec = tf.signal.rfft(s)
    back = tf.signal.irfft(spec * tf.complex(tf.cos(s[:, :5]), 0.0))
    c = tf.signal.fft(tf.complex(s, -s))
    return chol, sol, tri, r, tf.math.real(spec), tf.math.imag(spec), back, c


def param_shapes(text):
    entry = [ln for ln in text.splitlines() if ln.startswith("ENTRY")][0]
    sig = re.findall(r"arg(\d+)\.\d+: \w+\[([\d,]*)\]", entry.split("->")[0])
    return [tuple(int(d) for d in dims.split(",") if d) for _, dims in sig]


def capture(name, fn, args, updates, rtol, atol, kernels_agree):
    xf = tf.function(fn, jit_compile=True)
    ir = xf.experimental_get_compiler_ir(*args)
    proto = ir(stage="hlo_serialized")
    text = ir(stage="hlo")
    cf = xf.get_concrete_function(*args)
    by_handle = {id(v.handle): v for v in
                 dense.variables + conv.variables + train_model.variables + lstm.variables
                 + gru.variables}
    captured = [by_handle[id(h)] for h in cf.captured_inputs]
    ins = [np.asarray(a) for a in args] + [v.numpy() for v in captured]
    shapes = param_shapes(text)
    if shapes != [a.shape for a in ins]:
        raise SystemExit(f"{name}: parameters {shapes}, arguments and captures "
                         f"{[a.shape for a in ins]}")
    upd = list(updates()) if updates else []
    before = [v.numpy() for v in upd]
    outs = [np.asarray(o) for o in tf.nest.flatten(xf(*args))]
    # the updated variables, in the order of the parameters they came in as
    order = sorted(upd, key=lambda v: [id(c) for c in captured].index(id(v)))
    outs += [v.numpy() for v in order]
    # TF's own kernels (no XLA) agree; then the variables are put back as they were
    for v, b in zip(upd, before):
        v.assign(b)
    ref = [np.asarray(o) for o in tf.nest.flatten(tf.function(fn)(*args))]
    ref += [v.numpy() for v in order]
    for v, b in zip(upd, before):
        v.assign(b)
    if not kernels_agree:
        ref = outs
    for i, (o, r) in enumerate(zip(outs, ref)):
        if o.dtype.kind == "f":
            np.testing.assert_allclose(o, r, rtol=rtol, atol=atol, err_msg=f"{name} output {i}")
        else:
            np.testing.assert_array_equal(o, r, err_msg=f"{name} output {i}")
    return proto, text, ins, outs


def main():
    only = set(sys.argv[1:])
    lines = {}
    for name, fn, args, rtol, atol, updates, kernels_agree in CASES:
        if only and name not in only:
            continue
        proto, text, ins, outs = capture(name, fn, args, updates, rtol, atol, kernels_agree)
        lines[name] = write_case(name, proto, text, ins, outs, rtol, atol)
    write_manifest("MANIFEST.tf", lines, only)


if __name__ == "__main__":
    main()
