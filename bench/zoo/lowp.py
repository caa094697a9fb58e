"""Low-precision models: bf16 and f16 arithmetic as mixed-precision users write it."""
import numpy as np

from . import host, normal, workload


@workload("bf16_matmul_gelu_chain",
          "4 x (bf16 [128,512] @ bf16 [512,512] + bias, jax.nn.gelu (tanh approx)) chain, "
          "all in bfloat16", tol_scale=2)
def bf16_matmul_gelu_chain():
    # tol_scale: a 1-ulp bf16 rounding difference in one layer carries into the next
    import jax
    import jax.numpy as jnp
    import ml_dtypes

    def f(x, ws, bs):
        for w, b in zip(ws, bs):
            x = jax.nn.gelu(x @ w + b)
        return x
    bf = ml_dtypes.bfloat16
    ws = [normal((512, 512), seed=i, scale=512 ** -0.5).astype(bf) for i in range(4)]
    bs = [normal((512,), seed=10 + i, scale=0.1).astype(bf) for i in range(4)]
    return f, (normal((128, 512), seed=20).astype(bf), ws, bs)


@workload("f16_mlp_infer",
          "float16 MLP 256-1024-1024-10 inference, batch 64: f16 matmuls, relu, softmax in f16")
def f16_mlp_infer():
    import jax
    import jax.numpy as jnp

    def f(params, x):
        for w, b in params[:-1]:
            x = jax.nn.relu(x @ w + b)
        w, b = params[-1]
        return jax.nn.softmax(x @ w + b)
    dims = (256, 1024, 1024, 10)
    params = [(normal((a, b), seed=i, scale=a ** -0.5).astype(np.float16),
               np.zeros(b, np.float16)) for i, (a, b) in enumerate(zip(dims, dims[1:]))]
    return f, (params, normal((64, 256), seed=9).astype(np.float16))


@workload("linen_bf16_mixed_cnn_infer",
          "linen CNN in mixed precision (dtype=bfloat16 compute, float32 params): conv3x3(32) "
          "+ relu, conv3x3/2(64) + relu, avg pool, dense 10 on 32x32x3 batch 16",
          ("flax",), tol_scale=2)
def linen_bf16_mixed_cnn_infer():
    import jax
    import jax.numpy as jnp
    from flax import linen as nn

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x):
            # not three stride-1 bf16 conv+relu layers then the mean: XLA:CPU (jaxlib 0.12.0.1)
            # returns NaN for that program (each part alone is right; cjrt's result is finite)
            for feat, stride in ((32, 1), (64, 2)):
                x = nn.relu(nn.Conv(feat, (3, 3), stride, dtype=jnp.bfloat16)(x))
            return nn.Dense(10, dtype=jnp.bfloat16)(x.mean(axis=(1, 2)))

    model = CNN()
    x = normal((16, 32, 32, 3), seed=3)
    params = model.init(jax.random.key(0), x)
    return (lambda p, x: model.apply(p, x)), host((params, x))
