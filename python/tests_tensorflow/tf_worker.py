"""One TensorFlow run on cjrt, printed as JSON: `python tf_worker.py PLUGIN`.

Loads the cjrt plugin as a next pluggable device, lists the devices, and trains a small Keras
model for a few steps with a `tf.function(jit_compile=True)` train step, once on TensorFlow's CPU
and once on /device:CJRT:0, from the same initial weights and data. TF_XLA_FLAGS must carry
--tf_xla_use_device_api_for_compile_on_demand (test_tensorflow.py sets it)."""
import json
import sys

import numpy as np
import tensorflow as tf
from tensorflow.python.framework import load_library

STEPS = 3


def build(keras):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation="tanh"),
                              keras.layers.Dense(1)])
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 4)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) + 0.25).astype(np.float32)
    return model, x, y


def train(model, x, y, device):
    weights = [v.numpy() for v in model.trainable_variables]

    @tf.function(jit_compile=True)
    def step(params, xb, yb):
        with tf.GradientTape() as tape:
            tape.watch(params)
            pred, _ = model.stateless_call(params, [], xb)
            loss = tf.reduce_mean(tf.square(pred - yb))
        grads = tape.gradient(loss, params)
        return [p - 0.1 * g for p, g in zip(params, grads)], loss

    losses, where = [], set()
    with tf.device(device):
        params = [tf.identity(tf.constant(w)) for w in weights]
        xb, yb = tf.identity(tf.constant(x)), tf.identity(tf.constant(y))
        for _ in range(STEPS):
            params, loss = step(params, xb, yb)
            where.add(loss.device)
            losses.append(float(loss.numpy()))
    return {"losses": losses, "param_sums": [float(np.sum(p.numpy())) for p in params],
            "result_devices": sorted(where)}


def main():
    load_library.load_pluggable_device_library(sys.argv[1])
    import keras
    out = {"devices": [d.name for d in tf.config.list_physical_devices()]}
    model, x, y = build(keras)
    out["cpu"] = train(model, x, y, "/device:CPU:0")
    out["cjrt"] = train(model, x, y, "/device:CJRT:0")
    print("RESULT " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
