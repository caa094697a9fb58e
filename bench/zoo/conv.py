"""Convolutions of the common shapes, with jax.lax.conv_general_dilated / conv_transpose in
the layouts users pass (NHWC/HWIO as flax does, NCHW/OIHW as PyTorch ports do)."""
import numpy as np

from . import host, normal, workload

NHWC = ("NHWC", "HWIO", "NHWC")


@workload("conv2d_depthwise_block",
          "MobileNet block in linen: depthwise 3x3 (feature_group_count=64) on f32[8,32,32,64], "
          "BN (inference), relu6, pointwise 1x1 64->128, relu6", ("flax",))
def conv2d_depthwise_block():
    import jax
    import jax.numpy as jnp
    from flax import linen as nn

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Conv(64, (3, 3), feature_group_count=64, use_bias=False)(x)
            x = nn.relu6(nn.BatchNorm(use_running_average=True)(x))
            return nn.relu6(nn.Conv(128, (1, 1))(x))

    model = Block()
    x = normal((8, 32, 32, 64), seed=1)
    v = model.init(jax.random.key(0), x)
    return (lambda v, x: model.apply(v, x)), host((v, x))


@workload("conv2d_strided_grad",
          "3x3 stride-2 SAME conv f32[16,32,32,32] -> 64 channels (NHWC/HWIO): loss and grads "
          "w.r.t. input and kernel (the transposed and the kernel-gradient convs)")
def conv2d_strided_grad():
    import jax
    import jax.numpy as jnp

    def f(x, w):
        def loss(x, w):
            y = jax.lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=NHWC)
            return jnp.mean(jax.nn.relu(y) ** 2)
        return jax.value_and_grad(loss, argnums=(0, 1))(x, w)
    return f, (normal((16, 32, 32, 32), seed=2), normal((3, 3, 32, 64), seed=3, scale=0.06))


@workload("conv2d_dilated",
          "atrous convs (DeepLab ASPP): 3x3 with rhs_dilation 2 and 4, SAME, on "
          "f32[4,64,64,32] -> 32 channels each, summed")
def conv2d_dilated():
    import jax

    def f(x, w2, w4):
        c = lambda w, d: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", rhs_dilation=(d, d),
                                                      dimension_numbers=NHWC)
        return c(w2, 2) + c(w4, 4)
    return f, (normal((4, 64, 64, 32), seed=4), normal((3, 3, 32, 32), seed=5, scale=0.06),
               normal((3, 3, 32, 32), seed=6, scale=0.06))


@workload("conv1d_wavenet_grad",
          "WaveNet-style causal 1-D convs (kernel 2, dilations 1,2,4,8, left padding, gated "
          "tanh*sigmoid, residual) on f32[4,2048,32] (NWC/WIO): loss and grad of the kernels")
def conv1d_wavenet_grad():
    import jax
    import jax.numpy as jnp

    def f(ws, x):
        def loss(ws):
            h = x
            for d, w in zip((1, 2, 4, 8), ws):
                y = jax.lax.conv_general_dilated(h, w, (1,), [(d, 0)], rhs_dilation=(d,),
                                                 dimension_numbers=("NWC", "WIO", "NWC"))
                a, b = jnp.split(y, 2, axis=-1)
                h = h + jnp.tanh(a) * jax.nn.sigmoid(b)
            return jnp.mean(h ** 2)
        return jax.value_and_grad(loss)(ws)
    ws = [normal((2, 32, 64), seed=10 + i, scale=0.1) for i in range(4)]
    return f, (ws, normal((4, 2048, 32), seed=7))


@workload("conv3d",
          "3-D conv 3x3x3 SAME on f32[2,16,32,32,8] (NDHWC/DHWIO) -> 16 channels, relu, then a "
          "stride-2 3x3x3 conv -> 32 channels (video / volumetric)")
def conv3d():
    import jax

    def f(x, w1, w2):
        dn = ("NDHWC", "DHWIO", "NDHWC")
        y = jax.nn.relu(jax.lax.conv_general_dilated(x, w1, (1, 1, 1), "SAME",
                                                     dimension_numbers=dn))
        return jax.lax.conv_general_dilated(y, w2, (2, 2, 2), "SAME", dimension_numbers=dn)
    return f, (normal((2, 16, 32, 32, 8), seed=8), normal((3, 3, 3, 8, 16), seed=9, scale=0.1),
               normal((3, 3, 3, 16, 32), seed=10, scale=0.05))


@workload("conv2d_transpose_grad",
          "decoder upsampling: jax.lax.conv_transpose 4x4 stride 2 SAME f32[8,16,16,64] -> "
          "[8,32,32,32] (NHWC/HWIO), relu, MSE: loss and grads w.r.t. input and kernel")
def conv2d_transpose_grad():
    import jax
    import jax.numpy as jnp

    def f(x, w, t):
        def loss(x, w):
            y = jax.lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=NHWC)
            return jnp.mean((jax.nn.relu(y) - t) ** 2)
        return jax.value_and_grad(loss, argnums=(0, 1))(x, w)
    return f, (normal((8, 16, 16, 64), seed=11), normal((4, 4, 64, 32), seed=12, scale=0.05),
               normal((8, 32, 32, 32), seed=13))


@workload("conv2d_grouped_nchw",
          "PyTorch-layout conv: 5x5 VALID, feature_group_count=4 (grouped), NCHW/OIHW, "
          "f32[8,32,64,64] -> 64 channels, plus bias")
def conv2d_grouped_nchw():
    import jax

    def f(x, w, b):
        y = jax.lax.conv_general_dilated(x, w, (1, 1), "VALID", feature_group_count=4,
                                         dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return y + b[None, :, None, None]
    return f, (normal((8, 32, 64, 64), seed=14), normal((64, 8, 5, 5), seed=15, scale=0.07),
               normal((64,), seed=16))
