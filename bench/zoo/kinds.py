"""Kinds of work the first suite lacked, written as users write them: vision transformer and
MLP-Mixer blocks, message passing on a graph, a VAE and a small U-Net step, group and RMS
norms, pooling, float16 and float64 models, integer hashing, random number generation,
batched small sorts and top-k, odd einsums, small recurrences, Newton iterations in
while loops, odd-sized real FFTs, dynamic slices in loops, pad/concatenate-heavy code.
Shapes are chosen off the powers of two where users are (seq 197, heads of 48 and 80)."""
import numpy as np

from . import host, labels, normal, uniform, workload
from .flax_linen import _linen  # (jax, jnp, optax, nn), imported when a workload is built

LINEN = ("flax", "optax")
# a train step's outputs (params, opt_state, loss) -> the next step's inputs
NEXT2 = dict(advance=lambda out, args: tuple(out[:2]) + tuple(args[2:]), warm=2)


def _adam_step(loss_fn, params, tx, *data):
    """A plain optax step: (params, opt_state, *data) -> (params, opt_state, loss)."""
    jax, jnp, optax, nn = _linen()

    def step(params, opt_state, *data):
        loss, grads = jax.value_and_grad(loss_fn)(params, *data)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss
    return step, host((params, tx.init(params)) + tuple(data))


@workload("vit_block_infer",
          "ViT-Tiny style (linen): patch embed conv 16x16/16 of 224x224x3 -> 196 tokens + cls "
          "(seq 197), d 192, 3 heads of 64, pre-LN attention block + MLP 768 (gelu), head on "
          "cls -> 1000 classes; batch 2, inference", LINEN)
def vit_block_infer():
    jax, jnp, optax, nn = _linen()

    class ViT(nn.Module):
        @nn.compact
        def __call__(self, img):
            x = nn.Conv(192, (16, 16), strides=16)(img)
            b = x.shape[0]
            x = x.reshape(b, -1, 192)
            cls = self.param("cls", nn.initializers.normal(0.02), (1, 1, 192))
            x = jnp.concatenate([jnp.broadcast_to(cls, (b, 1, 192)), x], axis=1)
            x = x + self.param("pos", nn.initializers.normal(0.02), (1, x.shape[1], 192))
            y = nn.LayerNorm()(x)
            x = x + nn.MultiHeadDotProductAttention(num_heads=3)(y, y)
            y = nn.LayerNorm()(x)
            x = x + nn.Dense(192)(nn.gelu(nn.Dense(768)(y)))
            return nn.Dense(1000)(nn.LayerNorm()(x)[:, 0])

    model = ViT()
    img = normal((2, 224, 224, 3))
    params = model.init(jax.random.key(0), img)
    return model.apply, host((params, img))


@workload("mha_odd_heads_grad",
          "linen MultiHeadDotProductAttention with 3 heads of 80 (d 240) on seq 100, batch 4, "
          "padding mask (lengths 100, 77, 50, 13), mean-squared loss: loss and grad of the "
          "projections (attention backward at odd sizes)", LINEN)
def mha_odd_heads_grad():
    jax, jnp, optax, nn = _linen()
    mha = nn.MultiHeadDotProductAttention(num_heads=3, qkv_features=240)
    x = normal((4, 100, 240), scale=0.5)
    lengths = np.array([100, 77, 50, 13])
    valid = np.arange(100)[None, :] < lengths[:, None]
    mask = (valid[:, None, :, None] & valid[:, None, None, :])
    params = mha.init(jax.random.key(1), x, x)

    def loss(params, x, mask):
        y = mha.apply(params, x, x, mask=mask)
        return jnp.mean(jnp.where(mask[:, 0, :, :1], y, 0.0) ** 2)
    return jax.value_and_grad(loss), host((params, x, mask))


@workload("mixer_block_grad",
          "MLP-Mixer (linen): patch embed 8x8/8 of 64x64x3 -> 64 tokens x 128 channels, 2 mixer "
          "blocks (token mixing MLP 64-256-64 on the transposed [B,C,S], channel mixing "
          "128-512-128, LayerNorm, gelu), mean pool, dense 10, softmax CE; batch 16: loss "
          "and grad", LINEN)
def mixer_block_grad():
    jax, jnp, optax, nn = _linen()

    class MixerBlock(nn.Module):
        @nn.compact
        def __call__(self, x):
            y = jnp.swapaxes(nn.LayerNorm()(x), 1, 2)
            y = nn.Dense(x.shape[1])(nn.gelu(nn.Dense(256)(y)))
            x = x + jnp.swapaxes(y, 1, 2)
            y = nn.LayerNorm()(x)
            return x + nn.Dense(x.shape[2])(nn.gelu(nn.Dense(512)(y)))

    class Mixer(nn.Module):
        @nn.compact
        def __call__(self, img):
            x = nn.Conv(128, (8, 8), strides=8)(img)
            x = x.reshape(x.shape[0], -1, 128)
            for _ in range(2):
                x = MixerBlock()(x)
            return nn.Dense(10)(nn.LayerNorm()(x).mean(axis=1))

    model = Mixer()
    img, y = normal((16, 64, 64, 3)), labels(16, 10, seed=3)
    params = model.init(jax.random.key(2), img)

    def loss(params, img, y):
        return optax.softmax_cross_entropy_with_integer_labels(model.apply(params, img),
                                                               y).mean()
    return jax.value_and_grad(loss), host((params, img, y))


@workload("gnn_message_passing_grad",
          "graph network in plain jax: 2000 nodes x 64 features, 16000 random edges; 2 rounds "
          "of messages relu([h_s, h_r] W1) summed at receivers (jax.ops.segment_sum, unsorted), "
          "node update relu(h W2 + agg W3), mean-pooled readout, MSE: loss and grads (gathers "
          "and scatter-adds)", tol_scale=4)
def gnn_message_passing_grad():
    # tol_scale: segment sums of up to ~20 messages per node, in a different order on each engine
    import jax
    import jax.numpy as jnp

    n, e, f = 2000, 16000, 64
    rs = np.random.RandomState(60)
    send = rs.randint(0, n, e).astype(np.int32)
    recv = rs.randint(0, n, e).astype(np.int32)
    params = [{"w1": normal((2 * f, f), seed=61 + 3 * i, scale=0.1),
               "w2": normal((f, f), seed=62 + 3 * i, scale=0.1),
               "w3": normal((f, f), seed=63 + 3 * i, scale=0.1)} for i in range(2)]

    def loss(params, h, send, recv, target):
        for p in params:
            m = jax.nn.relu(jnp.concatenate([h[send], h[recv]], axis=1) @ p["w1"])
            agg = jax.ops.segment_sum(m, recv, num_segments=n)
            h = jax.nn.relu(h @ p["w2"] + agg @ p["w3"])
        return jnp.mean((h.mean(axis=0) - target) ** 2)
    return jax.value_and_grad(loss), (params, normal((n, f), seed=70), send, recv,
                                      normal((f,), seed=71))


@workload("vae_train_adam",
          "linen VAE: encoder 784-400 (relu) -> mean and log-variance 20, reparameterized "
          "sample with jax.random.normal (threefry in the step), decoder 20-400-784 "
          "(sigmoid BCE with logits) + KL; batch 64; optax.adam (state warmed by 2 steps)",
          LINEN, **NEXT2)
def vae_train_adam():
    jax, jnp, optax, nn = _linen()

    class VAE(nn.Module):
        @nn.compact
        def __call__(self, x, key):
            h = nn.relu(nn.Dense(400)(x))
            mu, logvar = nn.Dense(20)(h), nn.Dense(20)(h)
            z = mu + jnp.exp(0.5 * logvar) * jax.random.normal(key, mu.shape)
            logits = nn.Dense(784)(nn.relu(nn.Dense(400)(z)))
            return logits, mu, logvar

    model = VAE()
    x = (uniform((64, 784), seed=80, low=0, high=1) > 0.7).astype(np.float32)
    key = jax.random.key_data(jax.random.key(5))
    params = model.init(jax.random.key(4), x, jax.random.key(0))

    def loss(params, x, key):
        logits, mu, logvar = model.apply(params, x, jax.random.wrap_key_data(key))
        bce = optax.sigmoid_binary_cross_entropy(logits, x).sum(axis=1)
        kl = -0.5 * jnp.sum(1 + logvar - mu ** 2 - jnp.exp(logvar), axis=1)
        return jnp.mean(bce + kl)
    return _adam_step(loss, params, optax.adam(1e-3), x, np.asarray(key))


@workload("unet_diffusion_grad",
          "small U-Net denoiser (linen) on 32x32x3 batch 4: conv3x3 + GroupNorm(8) + swish "
          "blocks at 32/64 channels, stride-2 conv down, ConvTranspose 4x4/2 up, skip "
          "concatenation, sinusoidal timestep embedding added per block; epsilon MSE: loss and "
          "grad", LINEN, tol_scale=2)
def unet_diffusion_grad():
    # tol_scale: group norm statistics over 4 levels of convolutions and their gradients
    jax, jnp, optax, nn = _linen()

    class Block(nn.Module):
        feat: int

        @nn.compact
        def __call__(self, x, temb):
            h = nn.swish(nn.GroupNorm(num_groups=8)(nn.Conv(self.feat, (3, 3))(x)))
            h = h + nn.Dense(self.feat)(temb)[:, None, None, :]
            h = nn.swish(nn.GroupNorm(num_groups=8)(nn.Conv(self.feat, (3, 3))(h)))
            return h + nn.Conv(self.feat, (1, 1))(x)

    class UNet(nn.Module):
        @nn.compact
        def __call__(self, x, t):
            freqs = jnp.exp(-jnp.log(10000.0) * jnp.arange(16) / 16)
            temb = jnp.concatenate([jnp.sin(t[:, None] * freqs), jnp.cos(t[:, None] * freqs)], 1)
            temb = nn.Dense(64)(nn.swish(nn.Dense(64)(temb)))
            h1 = Block(32)(x, temb)
            h2 = Block(64)(nn.Conv(64, (3, 3), strides=2)(h1), temb)
            u = nn.ConvTranspose(32, (4, 4), strides=(2, 2))(h2)
            h = Block(32)(jnp.concatenate([u, h1], axis=-1), temb)
            return nn.Conv(3, (3, 3))(h)

    model = UNet()
    x, t, eps = normal((4, 32, 32, 3), seed=90), uniform((4,), seed=91, low=0, high=1000), \
        normal((4, 32, 32, 3), seed=92)
    params = model.init(jax.random.key(6), x, t)

    def loss(params, x, t, eps):
        return jnp.mean((model.apply(params, x + eps, t) - eps) ** 2)
    return jax.value_and_grad(loss), host((params, x, t, eps))


@workload("group_rms_norm",
          "flax linen GroupNorm(32 groups) of f32[8,32,32,128], LayerNorm over the channels, "
          "RMSNorm of f32[8,197,384] tokens, and jax.nn.standardize over (H, W, C); "
          "forward only", LINEN)
def group_rms_norm():
    jax, jnp, optax, nn = _linen()
    x, t = normal((8, 32, 32, 128), seed=100), normal((8, 197, 384), seed=101)
    mods = {"group": nn.GroupNorm(num_groups=32), "layer": nn.LayerNorm(), "rms": nn.RMSNorm()}
    params = {k: m.init(jax.random.key(0), t if k == "rms" else x) for k, m in mods.items()}

    def f(params, x, t):
        return {"group": mods["group"].apply(params["group"], x),
                "layer": mods["layer"].apply(params["layer"], x),
                "rms": mods["rms"].apply(params["rms"], t),
                "standardize": jax.nn.standardize(x, axis=(1, 2, 3))}
    return f, host((params, x, t))


@workload("conv1d_pool_classifier_grad",
          "1-D conv classifier (linen, NWC) on f32[16,1000,12] (ECG-like, length 1000): "
          "conv k7 (32) + relu + max_pool 3/2, conv k5 (64) + relu + avg_pool 2/2, conv k3 "
          "(64) + global max, dense 5, softmax CE: loss and grad (reduce_window max/avg and "
          "their gradients: select-and-scatter)", LINEN)
def conv1d_pool_classifier_grad():
    jax, jnp, optax, nn = _linen()

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.max_pool(nn.relu(nn.Conv(32, (7,))(x)), (3,), (2,), padding="SAME")
            x = nn.avg_pool(nn.relu(nn.Conv(64, (5,))(x)), (2,), (2,))
            x = nn.relu(nn.Conv(64, (3,))(x)).max(axis=1)
            return nn.Dense(5)(x)

    model = Net()
    x, y = normal((16, 1000, 12), seed=110), labels(16, 5, seed=111)
    params = model.init(jax.random.key(7), x)

    def loss(params, x, y):
        return optax.softmax_cross_entropy_with_integer_labels(model.apply(params, x), y).mean()
    return jax.value_and_grad(loss), host((params, x, y))


@workload("f16_conv_infer",
          "float16 everywhere (linen, dtype and param_dtype float16): conv3x3(32) + relu, "
          "conv3x3/2(64) + relu, max_pool 2, dense 10 + softmax on 32x32x3 batch 16", LINEN)
def f16_conv_infer():
    jax, jnp, optax, nn = _linen()
    h = dict(dtype=jnp.float16, param_dtype=jnp.float16)

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.Conv(32, (3, 3), **h)(x))
            x = nn.relu(nn.Conv(64, (3, 3), strides=2, **h)(x))
            x = nn.max_pool(x, (2, 2), (2, 2))
            return jax.nn.softmax(nn.Dense(10, **h)(x.reshape(x.shape[0], -1)))

    model = Net()
    x = normal((16, 32, 32, 3), np.float16, seed=120)
    params = model.init(jax.random.key(8), x)
    return model.apply, host((params, x))


@workload("f64_mlp_grad",
          "float64 (jax_enable_x64) MLP 64-256-256-1 with tanh on batch 256, MSE: loss and grad; "
          "plus a float64 logsumexp and cumsum of the activations (scientific-computing users)",
          x64=True)
def f64_mlp_grad():
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    params = [(normal((a, b), np.float64, seed=130 + i, scale=1 / np.sqrt(a)),
               np.zeros(b, np.float64)) for i, (a, b) in enumerate(((64, 256), (256, 256),
                                                                    (256, 1)))]

    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = params[-1]
        return jnp.mean((h @ w + b - y) ** 2), h

    def f(params, x, y):
        (l, h), g = jax.value_and_grad(loss, has_aux=True)(params, x, y)
        return l, g, logsumexp(h, axis=1), jnp.cumsum(h, axis=0)
    return f, (params, normal((256, 64), np.float64, seed=140),
               normal((256, 1), np.float64, seed=141))


@workload("int_hash_bitops",
          "integer work: a murmur3-style uint32 hash of 1M ids (multiply, xor, shifts, "
          "rotates), bucket = hash % 1000 and a bincount, population_count and "
          "count_leading_zeros, int32 argsort of the hashes, uint8 bit unpacking")
def int_hash_bitops():
    import jax
    import jax.numpy as jnp

    def f(ids, packed):
        h = ids.astype(jnp.uint32)
        rotl = lambda x, r: (x << r) | (x >> (32 - r))
        k = rotl(h * jnp.uint32(0xcc9e2d51), 15) * jnp.uint32(0x1b873593)
        h = rotl(jnp.uint32(42) ^ k, 13) * jnp.uint32(5) + jnp.uint32(0xe6546b64)
        h = h ^ (h >> 16)
        h = h * jnp.uint32(0x85ebca6b)
        h = h ^ (h >> 13)
        bucket = (h % jnp.uint32(1000)).astype(jnp.int32)
        return {"hash": h, "counts": jnp.bincount(bucket, length=1000),
                "popcount": jax.lax.population_count(h),
                "clz": jax.lax.clz(h),
                "argsort": jnp.argsort(h[:65536].astype(jnp.int32)),
                "bits": jnp.unpackbits(packed, axis=1)}
    rs = np.random.RandomState(150)
    return f, (rs.randint(0, 2 ** 31 - 1, 1 << 20).astype(np.int32),
               rs.randint(0, 256, (4096, 32)).astype(np.uint8))


@workload("random_sampling",
          "jax.random in a jitted function (threefry2x32): normal [1024,256], uniform "
          "[1M], bernoulli(0.3) [512,512], categorical over 1000 logits x 256, "
          "permutation of 10000, truncated_normal [256,256], split into 64 keys")
def random_sampling():
    import jax

    def f(key, logits):
        key = jax.random.wrap_key_data(key)
        ks = jax.random.split(key, 7)
        return {"normal": jax.random.normal(ks[0], (1024, 256)),
                "uniform": jax.random.uniform(ks[1], (1 << 20,)),
                "bernoulli": jax.random.bernoulli(ks[2], 0.3, (512, 512)),
                "categorical": jax.random.categorical(ks[3], logits, axis=-1),
                "permutation": jax.random.permutation(ks[4], 10000),
                "truncated": jax.random.truncated_normal(ks[5], -2.0, 2.0, (256, 256)),
                "split": jax.random.key_data(jax.random.split(ks[6], 64))}
    key = np.asarray(jax.random.key_data(jax.random.key(11)))
    return f, (key, normal((256, 1000), seed=160))


@workload("small_sorts_topk",
          "sorts users run on many short rows: jnp.sort and argsort along axis 0 of "
          "f32[100,2000], sort of int32[4096,16] rows, top_k k=5 of f32[2048,100] rows, "
          "jnp.median over axis 1 of f32[512,101], a lexsort of two int32 keys of length 50000")
def small_sorts_topk():
    import jax
    import jax.numpy as jnp

    def f(x, i, s, m, k1, k2):
        v, ix = jax.lax.top_k(s, 5)
        return {"sort0": jnp.sort(x, axis=0), "argsort0": jnp.argsort(x, axis=0),
                "sort_i32_rows": jnp.sort(i, axis=1), "topk_v": v, "topk_i": ix,
                "median": jnp.median(m, axis=1), "lexsort": jnp.lexsort((k2, k1))}
    rs = np.random.RandomState(170)
    return f, (normal((100, 2000), seed=171), rs.randint(-1000, 1000, (4096, 16)).astype(np.int32),
               normal((2048, 100), seed=172), normal((512, 101), seed=173),
               rs.randint(0, 100, 50000).astype(np.int32),
               rs.randint(0, 1000, 50000).astype(np.int32))


@workload("einsum_odd",
          "einsums with odd contractions: 'mbk,bkn->bmn' (batch in the middle), "
          "'bhqd,bkhd->bhqk' (keys in another layout), 'ijk,jkl->il' (two contracting dims), "
          "'bi,bj->bij' (outer product), 'bij,bj->bi' (batched matvec), 'ii->i' and a trace")
def einsum_odd():
    import jax.numpy as jnp

    def f(a, b, q, k, t, u, x, y, m, sq):
        return {"mbk_bkn": jnp.einsum("mbk,bkn->bmn", a, b),
                "bhqd_bkhd": jnp.einsum("bhqd,bkhd->bhqk", q, k),
                "ijk_jkl": jnp.einsum("ijk,jkl->il", t, u),
                "outer": jnp.einsum("bi,bj->bij", x, y),
                "matvec": jnp.einsum("bij,bj->bi", m, y),
                "diag": jnp.einsum("ii->i", sq), "trace": jnp.einsum("ii", sq)}
    return f, (normal((96, 12, 80), seed=180), normal((12, 80, 72), seed=181),
               normal((4, 6, 50, 48), seed=182), normal((4, 60, 6, 48), seed=183),
               normal((40, 30, 20), seed=184), normal((30, 20, 50), seed=185),
               normal((64, 100), seed=186), normal((64, 120), seed=187),
               normal((64, 100, 120), seed=188), normal((300, 300), seed=189))


@workload("rnn_small_scan",
          "a small recurrence in lax.scan: h = tanh(x_t W + h U + b), hidden 32, batch 4, "
          "1000 steps (a [4,32]x[32,32] matmul per step), outputs every state", tol_scale=4)
def rnn_small_scan():
    # tol_scale: 1000 dependent tanh steps (contractive: |U| is small)
    import jax
    import jax.numpy as jnp

    def f(w, u, b, xs, h0):
        def cell(h, x):
            h = jnp.tanh(x @ w + h @ u + b)
            return h, h
        return jax.lax.scan(cell, h0, xs)
    return f, (normal((8, 32), seed=190, scale=0.3), normal((32, 32), seed=191, scale=0.1),
               normal((32,), seed=192, scale=0.1), normal((1000, 4, 8), seed=193),
               np.zeros((4, 32), np.float32))


@workload("newton_kepler_while",
          "Newton's method for Kepler's equation E - e sin E = M on 4096 orbits in "
          "lax.while_loop until max |step| < 1e-6 or 50 iterations; then a vmapped scalar "
          "Newton sqrt with a per-element while loop (batched while: a predicate per lane)")
def newton_kepler_while():
    import jax
    import jax.numpy as jnp

    def kepler(m, e):
        def cond(s):
            _, step, it = s
            return (step > 1e-6) & (it < 50)

        def body(s):
            E, _, it = s
            d = (E - e * jnp.sin(E) - m) / (1 - e * jnp.cos(E))
            return E - d, jnp.max(jnp.abs(d)), it + 1
        E, _, it = jax.lax.while_loop(cond, body, (m, jnp.float32(1.0), 0))
        return E, it

    def sqrt_newton(a):
        def body(s):
            x, _ = s
            y = 0.5 * (x + a / x)
            return y, jnp.abs(y - x)
        return jax.lax.while_loop(lambda s: s[1] > 1e-6 * a, body, (a + 1.0, a))[0]

    def f(m, e, a):
        E, it = kepler(m, e)
        return {"E": E, "iters": it, "sqrt": jax.vmap(sqrt_newton)(a)}
    return f, (uniform((4096,), seed=200, low=0, high=6.28), uniform((4096,), seed=201, low=0,
                                                                      high=0.9),
               uniform((1024,), seed=202, low=0.01, high=100))


@workload("fft_odd_images",
          "jnp.fft.rfft2 and irfft2 of f32[8,100,150] (non-power-of-two images: 2*2*5*5 by "
          "2*3*5*5), fftn of complex64[4,36,49], and a gaussian blur as rfft2 * kernel -> "
          "irfft2")
def fft_odd_images():
    import jax.numpy as jnp

    def f(img, c, ker):
        spec = jnp.fft.rfft2(img)
        return {"rfft2": spec, "irfft2": jnp.fft.irfft2(spec, s=img.shape[-2:]),
                "fftn": jnp.fft.fftn(c, axes=(1, 2)),
                "blur": jnp.fft.irfft2(spec * jnp.fft.rfft2(ker), s=img.shape[-2:])}
    yy, xx = np.meshgrid(np.fft.fftfreq(100) * 100, np.fft.fftfreq(150) * 150, indexing="ij")
    ker = np.exp(-(yy ** 2 + xx ** 2) / 8).astype(np.float32)
    ker /= ker.sum()
    c = (normal((4, 36, 49), seed=211) + 1j * normal((4, 36, 49), seed=212)).astype(np.complex64)
    return f, (normal((8, 100, 150), seed=210), c, ker)


@workload("dynamic_slice_loop",
          "sliding windows in lax.fori_loop: 500 steps, each lax.dynamic_slice of a [64,128] "
          "window from a f32[1024,128] signal at a data-dependent offset, a matvec, and "
          "lax.dynamic_update_slice of the result into a [500,64] buffer (ring of features)")
def dynamic_slice_loop():
    import jax
    import jax.numpy as jnp

    def f(sig, w, offs):
        def body(i, buf):
            win = jax.lax.dynamic_slice(sig, (offs[i], 0), (64, 128))
            row = jnp.tanh(win @ w)[:, 0]
            return jax.lax.dynamic_update_slice(buf, row[None, :], (i, 0))
        return jax.lax.fori_loop(0, 500, body, jnp.zeros((500, 64), jnp.float32))
    rs = np.random.RandomState(220)
    return f, (normal((1024, 128), seed=221), normal((128, 1), seed=222, scale=0.1),
               rs.randint(0, 1024 - 64, 500).astype(np.int32))


@workload("pad_concat_heavy",
          "data-layout code: jnp.pad of f32[8,64,64,16] in constant, reflect, edge and wrap "
          "modes, concatenate of 6 slices along channels, jnp.roll by (3, -5), jnp.tile, a "
          "space-to-depth reshape/transpose, jnp.flip, and an interleave by stack+reshape")
def pad_concat_heavy():
    import jax.numpy as jnp

    def f(x, y):
        b, h, w, c = x.shape
        s2d = x.reshape(b, h // 2, 2, w // 2, 2, c).transpose(0, 1, 3, 2, 4, 5).reshape(
            b, h // 2, w // 2, 4 * c)
        return {"constant": jnp.pad(x, ((0, 0), (2, 3), (1, 1), (0, 0))),
                "reflect": jnp.pad(x, ((0, 0), (3, 3), (3, 3), (0, 0)), mode="reflect"),
                "edge": jnp.pad(x, ((0, 0), (1, 2), (2, 1), (0, 0)), mode="edge"),
                "wrap": jnp.pad(x, ((0, 0), (4, 4), (4, 4), (0, 0)), mode="wrap"),
                "concat": jnp.concatenate([x[..., :4], y, x[..., 4:8] * 2, y[:, ::-1], x,
                                           jnp.maximum(x[..., 8:], 0)], axis=-1),
                "roll": jnp.roll(x, (3, -5), axis=(1, 2)), "tile": jnp.tile(y, (1, 2, 1, 3)),
                "s2d": s2d, "flip": jnp.flip(x, axis=(1, 3)),
                "interleave": jnp.stack([x, -x], axis=3).reshape(b, h, 2 * w, c)}
    return f, (normal((8, 64, 64, 16), seed=230), normal((8, 64, 64, 8), seed=231))


@workload("pooling_kinds_infer",
          "flax pooling forward as users call it: nn.max_pool 3x3/2 SAME (a ResNet stem), "
          "nn.avg_pool 3x3/2 SAME without the padding in the count, nn.avg_pool 2x2/2 on "
          "NHWC f32[8,56,56,64]; 1-D nn.max_pool 3/1 SAME and nn.avg_pool 4/2 on NWC "
          "f32[16,500,32]; a min pool 2x2x2/2 (flax's nn.pooling.pool) on NDHWC f32[2,16,28,28,16]; a max pool 3x3/2 "
          "of NCHW f32[8,64,56,56] with lax.reduce_window (code ported from PyTorch)", LINEN)
def pooling_kinds_infer():
    jax, jnp, optax, nn = _linen()

    def f(img, seq, vol, nchw):
        return {"max3s2": nn.max_pool(img, (3, 3), (2, 2), padding="SAME"),
                "avg3s2": nn.avg_pool(img, (3, 3), (2, 2), padding="SAME",
                                      count_include_pad=False),
                "avg2": nn.avg_pool(img, (2, 2), (2, 2)),
                "max1d": nn.max_pool(seq, (3,), (1,), padding="SAME"),
                "avg1d": nn.avg_pool(seq, (4,), (2,)),
                "min3d": nn.pooling.pool(vol, jnp.inf, jax.lax.min, (2, 2, 2), (2, 2, 2), "VALID"),
                "nchw": jax.lax.reduce_window(nchw, -jnp.inf, jax.lax.max, (1, 1, 3, 3),
                                              (1, 1, 2, 2), "SAME")}
    return f, (normal((8, 56, 56, 64), seed=240), normal((16, 500, 32), seed=241),
               normal((2, 16, 28, 28, 16), seed=242), normal((8, 64, 56, 56), seed=243))
