"""flax.nnx models with optax, in nnx's functional form (nnx.split once, nnx.merge inside the
jitted step, return nnx.state): the form that jits with plain jax.jit."""
from . import host, labels, normal, workload

NEEDS = ("flax", "optax")
# a train step's outputs (loss, state) -> the next step's inputs (state, x, y)
NEXT = dict(advance=lambda out, args: (out[1],) + tuple(args[1:]), warm=2)


def _nnx():
    import jax
    import jax.numpy as jnp
    import optax
    from flax import nnx
    return jax, jnp, optax, nnx


def _train_step(model, tx, loss_of_model, x, y):
    jax, jnp, optax, nnx = _nnx()
    opt = nnx.Optimizer(model, tx, wrt=nnx.Param)
    graphdef, state = nnx.split((model, opt))

    def step(state, x, y):
        model, opt = nnx.merge(graphdef, state)
        model.train()
        loss, grads = nnx.value_and_grad(lambda m: loss_of_model(m, x, y))(model)
        opt.update(model, grads)
        return loss, nnx.state((model, opt))
    return step, host((state, x, y))


@workload("nnx_cnn_bn_train",
          "nnx CNN: conv3x3(32)-BatchNorm-relu-avgpool2, conv3x3(64)-BatchNorm-relu-avgpool2, "
          "dense 10; 28x28x1 batch 32; nnx.Optimizer(optax.adamw), state warmed by 2 steps; batch "
          "stats updated", NEEDS, **NEXT)
def nnx_cnn_bn_train():
    jax, jnp, optax, nnx = _nnx()

    class CNN(nnx.Module):
        def __init__(self, rngs):
            self.c1 = nnx.Conv(1, 32, (3, 3), use_bias=False, rngs=rngs)
            self.b1 = nnx.BatchNorm(32, rngs=rngs)
            self.c2 = nnx.Conv(32, 64, (3, 3), use_bias=False, rngs=rngs)
            self.b2 = nnx.BatchNorm(64, rngs=rngs)
            self.out = nnx.Linear(7 * 7 * 64, 10, rngs=rngs)

        def __call__(self, x):
            pool = lambda x: nnx.avg_pool(x, (2, 2), (2, 2))
            x = pool(nnx.relu(self.b1(self.c1(x))))
            x = pool(nnx.relu(self.b2(self.c2(x))))
            return self.out(x.reshape(x.shape[0], -1))

    def loss(m, x, y):
        return optax.softmax_cross_entropy_with_integer_labels(m(x), y).mean()
    return _train_step(CNN(nnx.Rngs(0)), optax.adamw(1e-3), loss, normal((32, 28, 28, 1)),
                       labels(32, 10))


@workload("nnx_mlp_dropout_train",
          "nnx MLP 256-512-512-10 with nnx.Dropout(0.1) (threefry RNG in the step), batch 64, "
          "nnx.Optimizer(optax.adamw), state warmed by 2 steps", NEEDS, **NEXT)
def nnx_mlp_dropout_train():
    jax, jnp, optax, nnx = _nnx()

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(256, 512, rngs=rngs)
            self.l2 = nnx.Linear(512, 512, rngs=rngs)
            self.l3 = nnx.Linear(512, 10, rngs=rngs)
            self.drop = nnx.Dropout(0.1, rngs=rngs)

        def __call__(self, x):
            x = self.drop(nnx.gelu(self.l1(x)))
            x = self.drop(nnx.gelu(self.l2(x)))
            return self.l3(x)

    def loss(m, x, y):
        return optax.softmax_cross_entropy_with_integer_labels(m(x), y).mean()
    return _train_step(MLP(nnx.Rngs(0, dropout=1)), optax.adamw(1e-3), loss,
                       normal((64, 256), seed=1), labels(64, 10, seed=1))


@workload("nnx_gru_scan_grad",
          "nnx.RNN(nnx.GRUCell 16->64) over 128 steps (scan), batch 16, dense on the last step, "
          "MSE: loss and grad w.r.t. the parameters (nnx.value_and_grad)", NEEDS)
def nnx_gru_scan_grad():
    jax, jnp, optax, nnx = _nnx()

    class Seq(nnx.Module):
        def __init__(self, rngs):
            self.rnn = nnx.RNN(nnx.GRUCell(16, 64, rngs=rngs))
            self.out = nnx.Linear(64, 1, rngs=rngs)

        def __call__(self, x):
            return self.out(self.rnn(x)[:, -1])

    model = Seq(nnx.Rngs(0))
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)

    def fwd_grad(params, rest, x, t):
        m = nnx.merge(graphdef, params, rest)
        return nnx.value_and_grad(lambda m: jnp.mean((m(x) - t) ** 2))(m)
    return fwd_grad, host((params, rest, normal((16, 128, 16), seed=2), normal((16, 1), seed=3)))
