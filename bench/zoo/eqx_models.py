"""equinox models (with optax): the model is a pytree, split with eqx.partition into arrays
(the jitted function's arguments) and the static rest (closed over), as eqx.filter_jit does."""
from . import host, labels, normal, workload

NEEDS = ("equinox", "optax")


def _eqx():
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    import optax
    return jax, jnp, optax, eqx


@workload("eqx_mlp_train",
          "equinox eqx.nn.MLP 64-256-256-10 (relu), vmapped over batch 128, softmax CE, "
          "eqx.filter_value_and_grad, optax.adam step (state warmed by 2 steps)", NEEDS,
          advance=lambda out, args: tuple(out[:2]) + tuple(args[2:]), warm=2)
def eqx_mlp_train():
    jax, jnp, optax, eqx = _eqx()
    model = eqx.nn.MLP(64, 10, 256, 2, key=jax.random.key(0))
    params, static = eqx.partition(model, eqx.is_array)
    tx = optax.adam(1e-3)
    opt_state = tx.init(params)

    def step(params, opt_state, x, y):
        def loss(model):
            logits = jax.vmap(model)(x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
        model = eqx.combine(params, static)
        l, grads = eqx.filter_value_and_grad(loss)(model)
        updates, opt_state = tx.update(grads, opt_state, eqx.filter(model, eqx.is_array))
        model = eqx.apply_updates(model, updates)
        return eqx.filter(model, eqx.is_array), opt_state, l
    return step, host((params, opt_state, normal((128, 64)), labels(128, 10)))


@workload("eqx_lstm_scan_grad",
          "equinox eqx.nn.LSTMCell(16->64) stepped by lax.scan over 128 steps, vmapped over "
          "batch 16, linear head, MSE: loss and grad", NEEDS)
def eqx_lstm_scan_grad():
    jax, jnp, optax, eqx = _eqx()

    class Seq(eqx.Module):
        cell: eqx.nn.LSTMCell
        head: eqx.nn.Linear

        def __init__(self, key):
            k1, k2 = jax.random.split(key)
            self.cell = eqx.nn.LSTMCell(16, 64, key=k1)
            self.head = eqx.nn.Linear(64, 1, key=k2)

        def __call__(self, xs):  # xs [T, 16]
            def f(carry, x):
                return self.cell(x, carry), None
            init = (jnp.zeros(64), jnp.zeros(64))
            (h, c), _ = jax.lax.scan(f, init, xs)
            return self.head(h)

    model = Seq(jax.random.key(0))
    params, static = eqx.partition(model, eqx.is_array)

    def fwd_grad(params, x, t):
        @eqx.filter_value_and_grad
        def loss(model):
            return jnp.mean((jax.vmap(model)(x) - t) ** 2)
        return loss(eqx.combine(params, static))
    return fwd_grad, host((params, normal((16, 128, 16), seed=2), normal((16, 1), seed=3)))


@workload("eqx_neural_ode_rk4",
          "equinox neural ODE: MLP vector field (2-32-32-2, tanh) integrated by hand-written "
          "RK4, 1000 steps in lax.fori_loop, batch 64 initial states (many tiny matmuls)",
          NEEDS, tol_scale=10)
def eqx_neural_ode_rk4():
    # tol_scale: 1000 dependent steps of an MLP accumulate a few ulps per step
    jax, jnp, optax, eqx = _eqx()
    field = eqx.nn.MLP(2, 2, 32, 2, activation=jnp.tanh, key=jax.random.key(1))
    params, static = eqx.partition(field, eqx.is_array)
    # a contracting field: damp the state so errors do not grow
    def integrate(params, y0):
        f = eqx.combine(params, static)
        g = lambda y: jax.vmap(f)(y) * 0.1 - 0.5 * y
        dt = 0.01

        def body(_, y):
            k1 = g(y)
            k2 = g(y + 0.5 * dt * k1)
            k3 = g(y + 0.5 * dt * k2)
            k4 = g(y + dt * k3)
            return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return jax.lax.fori_loop(0, 1000, body, y0)
    return integrate, host((params, normal((64, 2), seed=4)))


@workload("eqx_conv1d_grad",
          "equinox 1-D conv net on audio-like input [8, 1, 4096]: Conv1d(1->16,k9,stride 2), "
          "relu, Conv1d(16->32,k9,stride 4,dilation 2), relu, mean, Linear: loss and grad",
          NEEDS)
def eqx_conv1d_grad():
    jax, jnp, optax, eqx = _eqx()
    k = jax.random.split(jax.random.key(2), 3)
    model = [eqx.nn.Conv1d(1, 16, 9, stride=2, key=k[0]),
             eqx.nn.Conv1d(16, 32, 9, stride=4, dilation=2, key=k[1]),
             eqx.nn.Linear(32, 1, key=k[2])]
    params, static = eqx.partition(model, eqx.is_array)

    def fwd_grad(params, x, t):
        def one(m, x):
            c1, c2, lin = m
            h = jax.nn.relu(c2(jax.nn.relu(c1(x))))
            return lin(h.mean(axis=-1))

        @eqx.filter_value_and_grad
        def loss(m):
            return jnp.mean((jax.vmap(lambda x: one(m, x))(x) - t) ** 2)
        return loss(eqx.combine(params, static))
    return fwd_grad, host((params, normal((8, 1, 4096), seed=5), normal((8, 1), seed=6)))
