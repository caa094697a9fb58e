#!/usr/bin/env python3
"""Regenerates the JAX fixtures of tests/bytecode/fixtures/.

Each program is exported twice, as the two kinds of bytes a PJRT plugin meets:

  <name>.export.mlir.bc   jax.export's serialized module (Exported.mlir_module_serialized): a
                          StableHLO portable artifact (VHLO in MLIR bytecode)
  <name>.plugin.mlir.bc   what jax hands a PJRT plugin through PJRT_Client_Compile: the lowered
                          module serialized by XLA's portable-artifact writer for the version
                          the plugin advertises (1.20.0, capped at jaxlib's own current version)

with <name>.export.mlir and <name>.plugin.mlir, upstream's reading of those bytes printed as
StableHLO text (twins to compare the reader against), the inputs <name>.in<i>.npy and the
expected outputs <name>.out<i>.npy computed by jax on CPU. native/ holds upstream's reading
of the artifacts (and of a few conformance ones) written back as plain MLIR bytecode of the
stablehlo dialect: a second, independent twin, compared op by op.

Run with a Python that has jax (the project's .venv or /work/venv-probe):
  python tests/bytecode/make_fixtures.py [outdir] [--shards-only]
"""
import io
import os
import sys

# The sharded program needs two CPU devices; set before jax is imported.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import export, lax  # noqa: E402
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402
from jaxlib import _jax  # noqa: E402
from jaxlib.mlir.dialects import stablehlo  # noqa: E402

PLUGIN_VERSION = "1.20.0"  # what cjrt's PJRT_Plugin_Attributes advertise

# Locations name this script without its directory, so the fixtures do not depend on where the
# repository was checked out.
jax.config.update("jax_hlo_source_file_canonicalization_regex", ".*/")

HERE = os.path.dirname(os.path.abspath(__file__))
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
OUT = ARGS[0] if ARGS else os.path.join(HERE, "fixtures")
CORPUS = os.environ.get("CJRT_VHLO_CORPUS", os.path.join(
    HERE, "..", "..", "..", "shared", "conformance", "stablehlo", "tests", "vhlo"))
# corpus artifacts (container versions 0, 4 and 6) also kept as native twins
CORPUS_NATIVE = ["0_9_0", "0_14_0", "1_0_0", "1_15_0"]


def rng(seed):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------- programs

def mlp_train_step():
    def loss(params, x, y):
        w1, b1, w2, b2 = params
        h = jax.nn.relu(x @ w1 + b1)
        logits = h @ w2 + b2
        return jnp.mean(optax_softmax_xent(logits, y))

    def step(w1, b1, w2, b2, x, y):
        params = (w1, b1, w2, b2)
        l, g = jax.value_and_grad(loss)(params, x, y)
        new = tuple(p - 0.1 * gp for p, gp in zip(params, g))
        return (l,) + new

    r = rng(1)
    args = (r.normal(size=(16, 32)).astype(np.float32) * 0.2,
            np.zeros((32,), np.float32),
            r.normal(size=(32, 4)).astype(np.float32) * 0.2,
            np.zeros((4,), np.float32),
            r.normal(size=(8, 16)).astype(np.float32),
            np.eye(4, dtype=np.float32)[r.integers(0, 4, size=8)])
    return step, args, {}


def optax_softmax_xent(logits, labels):
    return -jnp.sum(labels * jax.nn.log_softmax(logits, axis=-1), axis=-1)


def conv_net():
    def f(x, w, wd):
        y = lax.conv_general_dilated(x, w, window_strides=(1, 1), padding="SAME",
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))
        y = jax.nn.relu(y)
        y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        y = y.reshape(y.shape[0], -1)
        return jax.nn.softmax(y @ wd)

    r = rng(2)
    args = (r.normal(size=(2, 1, 8, 8)).astype(np.float32),
            r.normal(size=(4, 1, 3, 3)).astype(np.float32) * 0.3,
            r.normal(size=(64, 3)).astype(np.float32) * 0.1)
    return f, args, {}


def transformer_block():
    d, heads = 16, 2

    def layer_norm(x, g, b):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
        return (x - mu) * lax.rsqrt(var + 1e-5) * g + b

    def f(x, wqkv, wo, w1, w2, g1, b1, g2, b2):
        s = x.shape[0]
        h = layer_norm(x, g1, b1)
        qkv = h @ wqkv
        q, k, v = jnp.split(qkv, 3, axis=-1)
        q = q.reshape(s, heads, d // heads).transpose(1, 0, 2)
        k = k.reshape(s, heads, d // heads).transpose(1, 0, 2)
        v = v.reshape(s, heads, d // heads).transpose(1, 0, 2)
        att = jnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(d // heads).astype(np.float32)
        mask = jnp.tril(jnp.ones((s, s), bool))
        att = jnp.where(mask, att, -1e9)
        att = jax.nn.softmax(att, axis=-1)
        o = jnp.einsum("hqk,hkd->hqd", att, v).transpose(1, 0, 2).reshape(s, d)
        x = x + o @ wo
        h = layer_norm(x, g2, b2)
        return x + jax.nn.gelu(h @ w1, approximate=False) @ w2

    r = rng(3)
    s = 8
    args = (r.normal(size=(s, d)).astype(np.float32),
            r.normal(size=(d, 3 * d)).astype(np.float32) * 0.2,
            r.normal(size=(d, d)).astype(np.float32) * 0.2,
            r.normal(size=(d, 4 * d)).astype(np.float32) * 0.2,
            r.normal(size=(4 * d, d)).astype(np.float32) * 0.2,
            np.ones((d,), np.float32), np.zeros((d,), np.float32),
            np.ones((d,), np.float32), np.zeros((d,), np.float32))
    return f, args, {}


def scan_rnn():
    def f(w, u, xs, h0):
        def cell(h, x):
            h = jnp.tanh(h @ w + x @ u)
            return h, jnp.sum(h)
        h, ys = lax.scan(cell, h0, xs)
        return h, ys

    r = rng(4)
    args = (r.normal(size=(8, 8)).astype(np.float32) * 0.3,
            r.normal(size=(4, 8)).astype(np.float32) * 0.3,
            r.normal(size=(12, 4)).astype(np.float32),
            np.zeros((8,), np.float32))
    return f, args, {}


def donated():
    def f(acc, x, n):
        return acc + x * n.astype(x.dtype), jnp.max(x)

    r = rng(5)
    args = (r.normal(size=(4, 8)).astype(np.float32),
            r.normal(size=(4, 8)).astype(np.float32),
            np.array(3, np.int32))
    return f, args, {"donate_argnums": (0,)}


def sharded():
    mesh = Mesh(np.array(jax.devices()[:2]), ("x",))
    in_sh = (NamedSharding(mesh, P("x", None)), NamedSharding(mesh, P(None, None)))
    out_sh = NamedSharding(mesh, P("x", None))

    def f(x, w):
        y = jnp.sin(x) @ w
        return lax.with_sharding_constraint(y * 2, out_sh)

    r = rng(6)
    args = (r.normal(size=(8, 4)).astype(np.float32),
            r.normal(size=(4, 6)).astype(np.float32))
    return f, args, {"in_shardings": in_sh, "out_shardings": out_sh}


def shape_poly():
    def f(x, y):
        s = jnp.sum(x * y[None, :], axis=1)
        return jax.nn.softmax(s), jnp.concatenate([x, x], axis=0)

    r = rng(7)
    args = (r.normal(size=(5, 4)).astype(np.float32),
            r.normal(size=(4,)).astype(np.float32))
    poly = (export.symbolic_shape("b, 4"), None)
    return f, args, {"poly": poly}


def shard_map():
    mesh = Mesh(np.array(jax.devices()[:2]), ("x",))

    def f(x, y):
        def inner(a, b):
            return jax.lax.psum(jnp.sin(a) * b, "x"), jnp.cos(a)
        return jax.shard_map(inner, mesh=mesh, in_specs=(P("x"), P()),
                             out_specs=(P(), P("x")))(x, y)

    r = rng(8)
    args = (r.normal(size=(8,)).astype(np.float32), r.normal(size=(4,)).astype(np.float32))
    return f, args, {}


PROGRAMS = [
    ("mlp_train_step", mlp_train_step),
    ("conv_net", conv_net),
    ("transformer_block", transformer_block),
    ("scan_rnn", scan_rnn),
    ("donated", donated),
    ("sharded", sharded),
    ("shape_poly", shape_poly),
    ("shard_map", shard_map),
]


# ---------------------------------------------------------------------------- hand-written

# Constructs the JAX programs above do not produce: every location kind, i1 data in its packed,
# splat and one-element forms, quantized and bounded types, small float and integer formats.
FEATURES = r"""
module @features attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xi1> loc("arg0"), %arg1: tensor<?x4xf32, #stablehlo.bounds<8, ?>>,
                         %arg2: tensor<4xf32>) -> (tensor<4xi1>, tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-3>>) {
    %0 = stablehlo.constant dense<[true, false, true, true]> : tensor<4xi1> loc(fused["a.py":1:2, "b.py":3:4])
    %1 = stablehlo.constant dense<true> : tensor<16xi1> loc(callsite("f"("f.py":10:3) at "g.py":20:5))
    %2 = stablehlo.constant dense<[true, false, true, true, false, false, true, false, true, true]> : tensor<10xi1> loc("n"("x.py":3:4))
    %3 = stablehlo.constant dense<false> : tensor<1xi1> loc("x.py":5:6 to 7:8)
    %4 = stablehlo.and %0, %arg0 : tensor<4xi1> loc(fused<"meta">["m.py":1:1])
    %5 = stablehlo.constant dense<(1.000000e+00,2.000000e+00)> : tensor<2x2xcomplex<f32>>
    %6 = stablehlo.constant dense<[1.500000e+00, -2.000000e+00]> : tensor<2xbf16>
    %7 = stablehlo.constant dense<[1.000000e+00, 4.480000e+02]> : tensor<2xf8E4M3FN>
    %8 = stablehlo.constant dense<[1, -2, 7]> : tensor<3xi4>
    %9 = stablehlo.constant dense<18446744073709551615> : tensor<ui64>
    %10 = stablehlo.constant dense<[-1.000000e+00, 6.000000e+00]> : tensor<2xf4E2M1FN>
    %11 = stablehlo.uniform_quantize %arg2 : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-3>>
    %12 = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>
    %13 = stablehlo.uniform_quantize %arg2 : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8<-127:127>:f32:0, {1.000000e-01:-30,5.000000e-01:-20,1.000000e+00:0,2.000000e+00:1}>>
    %14 = stablehlo.get_dimension_size %arg1, dim = 0 : (tensor<?x4xf32, #stablehlo.bounds<8, ?>>) -> tensor<i32>
    %15 = stablehlo.constant dense<[0x7FC00000, 0xFF800000, -0.000000e+00]> : tensor<3xf32>
    %16 = stablehlo.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf16> loc(unknown)
    %17 = stablehlo.custom_call @foo(%arg2) {backend_config = {x = 1 : i32}, api_version = 4 : i32, has_side_effect = true, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<4xf32>) -> tensor<4xf32>
    return %4, %11 : tensor<4xi1>, tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-3>>
  }
}
"""


def nested_ifs(depth):
    """A function whose body nests `depth` stablehlo.if ops."""
    lines = ["func.func @main(%arg0: tensor<i1>, %arg1: tensor<f32>) -> tensor<f32> {"]

    def emit(level, indent):
        pad = "  " * indent
        if level == depth:
            lines.append(pad + '"stablehlo.return"(%arg1) : (tensor<f32>) -> ()')
            return
        lines.append(pad + '%%r%d = "stablehlo.if"(%%arg0) ({' % level)
        emit(level + 1, indent + 1)
        lines.append(pad + "}, {")
        lines.append(pad + '  "stablehlo.return"(%arg1) : (tensor<f32>) -> ()')
        lines.append(pad + "}) : (tensor<i1>) -> tensor<f32>")
        lines.append(pad + '"stablehlo.return"(%%r%d) : (tensor<f32>) -> ()' % level if level else
                     pad + "func.return %r0 : tensor<f32>")

    emit(0, 1)
    lines.append("}")
    return "\n".join(lines)


def nested_arrays(depth):
    """A function carrying an attribute of `depth` nested arrays."""
    attr = "1 : i32"
    for _ in range(depth):
        attr = "[" + attr + "]"
    return ("func.func @main(%%arg0: tensor<f32>) -> tensor<f32> attributes {deep = %s} {\n"
            "  func.return %%arg0 : tensor<f32>\n}" % attr)


# Plain MLIR bytecode written from text (no VHLO): builtin attributes of every kind, a
# dense_resource constant, chlo and native stablehlo attributes.
PLAIN = r"""
module @plain attributes {test.array = [1 : i32, "s", @sym, unit, f32, {n = 2 : i64}],
                          test.dense_array = array<i64: 1, -2>, test.bools = array<i1: true, false>} {
  func.func @main(%arg0: tensor<3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xi1>) {
    %0 = stablehlo.constant dense_resource<blob1> : tensor<3xf32>
    %1 = stablehlo.add %0, %arg0 : tensor<3xf32>
    %2 = chlo.broadcast_compare %1, %arg0 {comparison_direction = #chlo<comparison_direction GT>} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %3 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %4 = stablehlo.dot_general %3, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, HIGHEST] : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
    %5 = chlo.lgamma %arg0 : tensor<3xf32> -> tensor<3xf32>
    return %1, %2 : tensor<3xf32>, tensor<3xi1>
  }
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x04000000000080BF0000004000004040"
    }
  }
#-}
"""


# Forward references: values used before their definition, in the module body and in a
# nested graph region (ops of an unregistered dialect), an attribute and a type of a dialect
# without a bytecode encoding (stored as text), and a region of several blocks with branches.
FORWARD_REFS = r"""
module {
  %0 = "test.use"(%2, %1) : (!foo.baz<3>, i64) -> i32
  %1 = "test.def"() : () -> i64
  "test.graph"() ({
    %a = "test.use"(%b, %0) : (f32, i32) -> f32
    %b = "test.def"(%a) : (f32) -> f32
  }) : () -> ()
  %2 = "test.def"() {attr = 3 : i32, text = #foo.bar<"x", 2>} : () -> !foo.baz<3>
  "test.cfg"() ({
  ^bb0:
    "test.br"()[^bb2] : () -> ()
  ^bb1(%x: i32):
    "test.term"(%x) : (i32) -> ()
  ^bb2:
    "test.br"()[^bb1, ^bb2] : () -> ()
  }) : () -> ()
}
"""


SPECIAL = [
    ("features", FEATURES),
    ("nested_ifs_100", nested_ifs(100)),     # deep but within the reader's limit
    ("nested_ifs_300", nested_ifs(300)),     # beyond it: must be rejected cleanly
    ("nested_arrays_300", nested_arrays(300)),
]


# ---------------------------------------------------------------------------- export

def plugin_target():
    return stablehlo.get_smaller_version(PLUGIN_VERSION, stablehlo.get_current_version())


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def shard_manifest(jitted, args, outs):
    """The per-device pieces of every argument and result of a multi-device program, as jax
    lays them out: one line `in|out <index> <device id> <start>:<stop>,...` per piece (a
    replicated value has the whole range on every device). Empty for one device."""
    compiled = jitted.lower(*args).compile()
    in_sh = compiled.input_shardings[0]
    out_sh = compiled.output_shardings
    out_sh = out_sh if isinstance(out_sh, (tuple, list)) else (out_sh,)
    ndev = max(len(s.device_set) for s in list(in_sh) + list(out_sh))
    if ndev <= 1:
        return ""
    lines = ["devices %d" % ndev]
    for kind, values, shardings in (("in", args, in_sh), ("out", outs, out_sh)):
        for i, (v, sh) in enumerate(zip(values, shardings)):
            shape = np.shape(v)
            for dev, idx in sorted(sh.devices_indices_map(shape).items(), key=lambda kv: kv[0].id):
                ranges = [sl.indices(n)[:2] for sl, n in zip(idx, shape)]
                lines.append("%s %d %d %s" % (kind, i, dev.id,
                                              ",".join("%d:%d" % r for r in ranges) or "-"))
    return "\n".join(lines) + "\n"


def write_manifests():
    """--shards-only: rewrites only the <name>.shards manifests."""
    for name, make in PROGRAMS:
        fn, args, opts = make()
        opts.pop("poly", None)
        jitted = jax.jit(fn, **opts)
        outs = jitted(*[np.array(a) for a in args])
        outs = jax.tree_util.tree_leaves(outs)
        text = shard_manifest(jitted, args, outs)
        if text:
            write(os.path.join(OUT, name + ".shards"), text.encode())
            print("%s.shards: %d pieces" % (name, text.count("\n") - 1))


def main():
    os.makedirs(OUT, exist_ok=True)
    if "--shards-only" in sys.argv:
        write_manifests()
        return
    total = 0
    for name, make in PROGRAMS:
        fn, args, opts = make()
        poly = opts.pop("poly", None)
        jitted = jax.jit(fn, **opts)
        # jax.export artifact (symbolic shapes where the program asks for them)
        if poly is not None:
            specs = [jax.ShapeDtypeStruct(p if p is not None else a.shape, a.dtype)
                     for p, a in zip(poly, args)]
        else:
            specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
        exp = export.export(jitted)(*specs)
        export_bytes = exp.mlir_module_serialized
        # the bytes a plugin receives: the lowered module as XLA serializes it for the plugin
        lowered = jitted.lower(*args)
        module = lowered.compiler_ir("stablehlo")
        plugin_bytes = _jax.mlir.serialize_portable_artifact(
            jax_mlir.module_to_bytecode(module), plugin_target())
        text = str(_jax.mlir.deserialize_portable_artifact(plugin_bytes, module.context))
        export_text = str(_jax.mlir.deserialize_portable_artifact(export_bytes, module.context))
        outs = jitted(*[np.array(a) for a in args])
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        write(os.path.join(OUT, name + ".export.mlir.bc"), export_bytes)
        write(os.path.join(OUT, name + ".plugin.mlir.bc"), plugin_bytes)
        write(os.path.join(OUT, name + ".plugin.mlir"), text.encode())
        write(os.path.join(OUT, name + ".export.mlir"), export_text.encode())
        files = 4
        for i, a in enumerate(args):
            np.save(os.path.join(OUT, "%s.in%d.npy" % (name, i)), np.asarray(a))
            files += 1
        for i, o in enumerate(jax.tree_util.tree_leaves(outs)):
            np.save(os.path.join(OUT, "%s.out%d.npy" % (name, i)), np.asarray(o))
            files += 1
        manifest = shard_manifest(jitted, args, jax.tree_util.tree_leaves(outs))
        if manifest:
            write(os.path.join(OUT, name + ".shards"), manifest.encode())
            files += 1
        size = len(export_bytes) + len(plugin_bytes) + len(text) + len(export_text)
        total += size
        print("%-18s export %6d B, plugin %6d B, text %6d B, %d files" %
              (name, len(export_bytes), len(plugin_bytes), len(text), files))
    for name, text in SPECIAL:
        data = stablehlo.serialize_portable_artifact_str(text, plugin_target())
        write(os.path.join(OUT, name + ".mlir.bc"), data)
        twin = ""
        if name == "features":  # the upstream reading of the bytes, as a text twin
            twin = str(_jax.mlir.deserialize_portable_artifact(data, jax_mlir.make_ir_context()))
            write(os.path.join(OUT, name + ".mlir"), twin.encode())
        total += len(data) + len(twin)
        print("%-18s %6d B" % (name, len(data)))
    for name, text in (("plain", PLAIN), ("forward_refs", FORWARD_REFS)):
        ctx = jax_mlir.make_ir_context()
        ctx.allow_unregistered_dialects = True
        with ctx:
            buf = io.BytesIO()
            jax_mlir.ir.Module.parse(text).operation.write_bytecode(buf)
            write(os.path.join(OUT, name + ".mlirbc"), buf.getvalue())
            total += len(buf.getvalue())
    # Plain MLIR bytecode of the same programs, as upstream's reader turns a portable artifact
    # into native stablehlo bytecode: the reader must build the same IR from both.
    native_dir = os.path.join(OUT, "native")
    os.makedirs(native_dir, exist_ok=True)
    sources = [os.path.join(OUT, n + "." + kind + ".mlir.bc")
               for n, _ in PROGRAMS for kind in ("export", "plugin")]
    sources.append(os.path.join(OUT, "features.mlir.bc"))
    sources += [os.path.join(CORPUS, "stablehlo_legalize_to_vhlo.%s.mlir.bc" % v) for v in CORPUS_NATIVE]
    for src in sources:
        module = _jax.mlir.deserialize_portable_artifact(open(src, "rb").read(),
                                                         jax_mlir.make_ir_context())
        buf = io.BytesIO()
        module.operation.write_bytecode(buf)
        native = buf.getvalue()
        name = os.path.basename(src)[:-len(".mlir.bc")] + ".mlirbc"
        write(os.path.join(native_dir, name), native)
        total += len(native)
    print("%d native twins" % len(sources))
    print("jax %s, plugin target %s; %d bytes of programs in %s" %
          (jax.__version__, plugin_target(), total, OUT))


if __name__ == "__main__":
    main()
