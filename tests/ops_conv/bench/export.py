import jax, jax.numpy as jnp
jax.config.update("jax_platforms", "cpu")
S = jax.ShapeDtypeStruct
def conv(x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
txt = jax.jit(conv).lower(S((32, 56, 56, 64), jnp.float32), S((3, 3, 64, 64), jnp.float32)).as_text(dialect="stablehlo")
open("conv3x3_b32_56_64.mlir", "w").write(txt)
print(txt)
