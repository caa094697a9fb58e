"""flax.linen models with optax: train steps with batch norm, recurrent layers, embeddings,
small-batch inference."""
import numpy as np

from . import host, labels, normal, workload

NEEDS = ("flax", "optax")
# a train step's outputs (params, stats, opt_state, loss) -> the next step's inputs
NEXT_BN = dict(advance=lambda out, args: tuple(out[:3]) + tuple(args[3:]), warm=2)


def _linen():
    import jax
    import jax.numpy as jnp
    import optax
    from flax import linen as nn
    return jax, jnp, optax, nn


def _bn_train_step(model, tx, variables, x, y):
    """The usual linen train step with mutable batch statistics (flax's ImageNet example
    shape): returns new params, batch stats, optimizer state and the loss."""
    jax, jnp, optax, nn = _linen()
    params, stats = variables["params"], variables["batch_stats"]
    opt_state = tx.init(params)

    def step(params, stats, opt_state, x, y):
        def loss_fn(params):
            logits, upd = model.apply({"params": params, "batch_stats": stats}, x, train=True,
                                      mutable=["batch_stats"])
            loss = optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
            return loss, upd["batch_stats"]
        (loss, new_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), new_stats, opt_state, loss
    return step, host((params, stats, opt_state, x, y))


@workload("linen_cnn_bn_train",
          "linen CNN: conv3x3(32)-BN-relu, conv3x3/2(64)-BN-relu, global avg pool, dense 10; "
          "28x28x1 batch 32; softmax CE; optax.adam (state warmed by 2 steps); batch stats updated "
          "(mutable)", NEEDS, **NEXT_BN)
def linen_cnn_bn_train():
    jax, jnp, optax, nn = _linen()

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            for feat, stride in ((32, 1), (64, 2)):
                x = nn.Conv(feat, (3, 3), strides=stride, use_bias=False)(x)
                x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
                x = nn.relu(x)
            x = x.mean(axis=(1, 2))
            return nn.Dense(10)(x)

    model = CNN()
    x, y = normal((32, 28, 28, 1)), labels(32, 10)
    variables = model.init(jax.random.key(0), x, train=False)
    return _bn_train_step(model, optax.adam(1e-3), variables, x, y)


@workload("linen_resnet_bn_train",
          "linen ResNet (flax example style): conv3x3(16)-BN-relu stem, 3 stages x 1 basic "
          "block (16/32/64 ch, stride 1/2/2, 1x1 projection shortcuts in stages 2-3), avg "
          "pool, dense 10; 32x32x3 batch 8; optax.sgd momentum 0.9 nesterov", NEEDS)
def linen_resnet_bn_train():
    jax, jnp, optax, nn = _linen()

    class Block(nn.Module):
        feat: int
        stride: int

        @nn.compact
        def __call__(self, x, train):
            bn = lambda: nn.BatchNorm(use_running_average=not train, momentum=0.9)
            r = x
            y = nn.Conv(self.feat, (3, 3), self.stride, use_bias=False)(x)
            y = nn.relu(bn()(y))
            y = nn.Conv(self.feat, (3, 3), use_bias=False)(y)
            y = bn()(y)
            if r.shape != y.shape:
                r = bn()(nn.Conv(self.feat, (1, 1), self.stride, use_bias=False)(r))
            return nn.relu(r + y)

    class ResNet(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            x = nn.Conv(16, (3, 3), use_bias=False)(x)
            x = nn.relu(nn.BatchNorm(use_running_average=not train, momentum=0.9)(x))
            for feat, stride in ((16, 1), (32, 2), (64, 2)):
                x = Block(feat, stride)(x, train)
            return nn.Dense(10)(jnp.mean(x, axis=(1, 2)))

    model = ResNet()
    x, y = normal((8, 32, 32, 3), seed=1), labels(8, 10, seed=1)
    variables = model.init(jax.random.key(0), x, train=False)
    return _bn_train_step(model, optax.sgd(0.1, momentum=0.9, nesterov=True), variables, x, y)


def _rnn_grad(cell_name):
    jax, jnp, optax, nn = _linen()
    cell_cls = getattr(nn, cell_name)

    class Seq(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = nn.RNN(cell_cls(features=64))(x)  # nn.RNN: a lax.scan over time
            return nn.Dense(1)(h[:, -1])

    model = Seq()
    x = normal((16, 128, 16), seed=2)
    t = normal((16, 1), seed=3)
    params = model.init(jax.random.key(0), x)

    def fwd_grad(params, x, t):
        loss = lambda p: jnp.mean((model.apply(p, x) - t) ** 2)
        return jax.value_and_grad(loss)(params)
    return fwd_grad, host((params, x, t))


@workload("linen_lstm_scan_grad",
          "linen nn.RNN(LSTMCell 64) over 128 steps (scan), batch 16, 16 features, dense on "
          "the last step, MSE: loss and grad", NEEDS)
def linen_lstm_scan_grad():
    return _rnn_grad("LSTMCell")


@workload("linen_gru_scan_grad",
          "linen nn.RNN(GRUCell 64) over 128 steps (scan), batch 16, 16 features, dense on "
          "the last step, MSE: loss and grad", NEEDS)
def linen_gru_scan_grad():
    return _rnn_grad("GRUCell")


@workload("linen_embed_grad",
          "linen nn.Embed(10000, 128) on int ids [32, 64] (gather), mean pool, dense 10, "
          "softmax CE: loss and grad (the table's grad is a scatter-add of 2048 rows)", NEEDS)
def linen_embed_grad():
    jax, jnp, optax, nn = _linen()

    class BoW(nn.Module):
        @nn.compact
        def __call__(self, ids):
            e = nn.Embed(10000, 128)(ids)
            return nn.Dense(10)(e.mean(axis=1))

    model = BoW()
    ids = np.random.RandomState(4).zipf(1.3, size=(32, 64)).clip(0, 9999).astype(np.int32)
    y = labels(32, 10, seed=4)
    params = model.init(jax.random.key(0), ids)

    def fwd_grad(params, ids, y):
        def loss(p):
            logits = model.apply(p, ids)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
        return jax.value_and_grad(loss)(params)
    return fwd_grad, host((params, ids, y))


def _mlp_infer(batch):
    jax, jnp, optax, nn = _linen()

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.Dense(512)(x))
            x = nn.relu(nn.Dense(512)(x))
            return nn.softmax(nn.Dense(10)(x))

    model = MLP()
    x = normal((batch, 784), seed=5)
    params = model.init(jax.random.key(0), x)
    return (lambda p, x: model.apply(p, x)), host((params, x))


@workload("linen_mlp_infer_b1",
          "linen MLP 784-512-512-10 + softmax, inference, batch 1 (latency: matrix-vector)",
          NEEDS)
def linen_mlp_infer_b1():
    return _mlp_infer(1)


@workload("linen_mlp_infer_b16",
          "linen MLP 784-512-512-10 + softmax, inference, batch 16", NEEDS)
def linen_mlp_infer_b16():
    return _mlp_infer(16)
