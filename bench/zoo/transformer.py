"""A decoder-only transformer language model in flax.linen (pre-LN, learned positions,
nn.MultiHeadDotProductAttention, GELU MLP; flax's lm1b example shape, smaller): an AdamW train
step with dropout, and inference with and without a KV cache (linen's decode=True cache)."""
import numpy as np

from . import host, workload

NEEDS = ("flax", "optax")
VOCAB, D, HEADS, FF, LAYERS, MAXLEN = 1000, 128, 4, 512, 2, 128


def _model(decode=False):
    import jax.numpy as jnp
    from flax import linen as nn

    class Block(nn.Module):
        decode: bool

        @nn.compact
        def __call__(self, x, mask, train):
            h = nn.LayerNorm()(x)
            # no attention biases (as LLaMA-style models): the key bias's gradient is zero
            # in exact arithmetic, so AdamW would move it by +-lr on rounding noise
            h = nn.MultiHeadDotProductAttention(num_heads=HEADS, qkv_features=D, use_bias=False,
                                                decode=self.decode)(h, mask=mask)
            x = x + nn.Dropout(0.1, deterministic=not train)(h)
            h = nn.LayerNorm()(x)
            h = nn.Dense(D)(nn.gelu(nn.Dense(FF)(h)))
            return x + nn.Dropout(0.1, deterministic=not train)(h)

    class LM(nn.Module):
        decode: bool = False

        @nn.compact
        def __call__(self, tokens, pos, train=False):
            x = nn.Embed(VOCAB, D)(tokens) + nn.Embed(MAXLEN, D)(pos)
            mask = None if self.decode else nn.make_causal_mask(tokens)
            for _ in range(LAYERS):
                x = Block(self.decode)(x, mask, train)
            return nn.Dense(VOCAB)(nn.LayerNorm()(x))

    return LM(decode=decode)


def _tokens(b, t, seed=0):
    return np.random.RandomState(seed).randint(0, VOCAB, size=(b, t)).astype(np.int32)


def _positions(b, t, start=0):
    return np.broadcast_to(np.arange(start, start + t, dtype=np.int32), (b, t)).copy()


def _params():
    import jax

    toks = _tokens(1, MAXLEN)
    return _model().init(jax.random.key(0), toks, _positions(1, MAXLEN))["params"]


@workload("linen_transformer_train_adamw",
          f"linen decoder-only LM (vocab {VOCAB}, d {D}, {HEADS} heads, ff {FF}, {LAYERS} "
          "layers, causal, no attention biases), 64 tokens batch 8, dropout 0.1 (RNG), "
          "next-token CE, optax.adamw(1e-3, wd 0.01) step (state warmed by 2 steps)", NEEDS,
          advance=lambda out, args: tuple(out[:2]) + tuple(args[2:]), warm=2)
def linen_transformer_train_adamw():
    import jax
    import optax

    model = _model()
    params = _params()
    tx = optax.adamw(1e-3, weight_decay=0.01)
    opt_state = tx.init(params)
    toks = _tokens(8, 65, seed=1)

    def step(params, opt_state, toks, key):
        x, y = toks[:, :-1], toks[:, 1:]
        pos = jax.numpy.broadcast_to(jax.numpy.arange(x.shape[1]), x.shape)

        def loss_fn(p):
            logits = model.apply({"params": p}, x, pos, train=True, rngs={"dropout": key})
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss
    key = jax.random.key_data(jax.random.key(7))
    return (lambda p, o, t, k: step(p, o, t, jax.random.wrap_key_data(k))), \
        host((params, opt_state, toks, key))


def _prefill(batch):
    model = _model()
    params = _params()

    def forward(params, toks, pos):  # the whole prompt at once: logits of every position
        return model.apply({"params": params}, toks, pos)
    return forward, host((params, _tokens(batch, 64, seed=2), _positions(batch, 64)))


@workload("tfm_prefill_b1_nocache",
          "the linen LM's forward (no cache, causal mask) on a 64-token prompt, batch 1: "
          "logits of all positions", NEEDS)
def tfm_prefill_b1_nocache():
    return _prefill(1)


@workload("tfm_prefill_b8_nocache",
          "the linen LM's forward (no cache, causal mask) on a 64-token prompt, batch 8", NEEDS)
def tfm_prefill_b8_nocache():
    return _prefill(8)


def _filled_cache(batch, index):
    """The decode model's cache (cached_key/value [B, MAXLEN, H, D/H] per layer) with `index`
    positions filled with random keys and values, as after a prefill of `index` tokens."""
    import jax

    dec = _model(decode=True)
    cache = dec.init(jax.random.key(0), _tokens(batch, MAXLEN), _positions(batch, MAXLEN))["cache"]
    rs = np.random.RandomState(3)

    def fill(path, x):
        name = jax.tree_util.keystr(path)
        x = np.asarray(x)
        if "cache_index" in name:
            return np.asarray(index, x.dtype)
        v = np.zeros(x.shape, x.dtype)
        v[:, :index] = rs.standard_normal(v[:, :index].shape)
        return v
    return dec, jax.tree_util.tree_map_with_path(fill, cache)


def _decode_step(batch):
    dec, cache = _filled_cache(batch, 64)
    params = _params()

    def step(params, cache, tok, pos):  # one new token per sequence; the cache is updated
        logits, upd = dec.apply({"params": params, "cache": cache}, tok, pos, mutable=["cache"])
        return logits, upd["cache"]
    return step, host((params, cache, _tokens(batch, 1, seed=4), _positions(batch, 1, 64)))


@workload("tfm_decode_step_b1_kvcache",
          "the linen LM's decode step (decode=True KV cache of 128 positions, 64 filled): one "
          "token, batch 1: logits and the updated cache", NEEDS)
def tfm_decode_step_b1_kvcache():
    return _decode_step(1)


@workload("tfm_decode_step_b8_kvcache",
          "the linen LM's decode step with the KV cache (128 positions, 64 filled), one token "
          "per sequence, batch 8", NEEDS)
def tfm_decode_step_b8_kvcache():
    return _decode_step(8)


@workload("tfm_generate_b1_kvcache",
          "greedy generation of 32 tokens, batch 1, with the KV cache (64 filled): decode "
          "step + argmax in lax.fori_loop", NEEDS)
def tfm_generate_b1_kvcache():
    import jax
    import jax.numpy as jnp

    dec, cache = _filled_cache(1, 64)
    params = _params()

    def generate(params, cache, tok):
        def body(i, carry):
            cache, tok, out = carry
            pos = jnp.full((1, 1), 64, jnp.int32) + i
            logits, upd = dec.apply({"params": params, "cache": cache}, tok, pos,
                                    mutable=["cache"])
            nxt = jnp.argmax(logits[:, -1], axis=-1).astype(jnp.int32)[:, None]
            return upd["cache"], nxt, out.at[:, i].set(nxt[:, 0])
        out = jnp.zeros((1, 32), jnp.int32)
        return jax.lax.fori_loop(0, 32, body, (cache, tok, out))[2]
    return generate, host((params, cache, _tokens(1, 1, seed=5)))


@workload("tfm_generate_b1_nocache",
          "greedy generation of 16 tokens, batch 1, without a cache: each step reruns the full "
          "forward over an 80-token buffer (causal mask) and writes the argmax; lax.fori_loop",
          NEEDS)
def tfm_generate_b1_nocache():
    import jax
    import jax.numpy as jnp

    model = _model()
    params = _params()

    def generate(params, buf):
        pos = jnp.arange(buf.shape[1])[None]

        def body(i, buf):
            logits = model.apply({"params": params}, buf, pos)
            cur = 63 + i
            nxt = jnp.argmax(jax.lax.dynamic_index_in_dim(logits[0], cur, keepdims=False))
            return buf.at[0, cur + 1].set(nxt.astype(buf.dtype))
        return jax.lax.fori_loop(0, 16, body, buf)
    buf = np.zeros((1, 80), np.int32)
    buf[:, :64] = _tokens(1, 64, seed=6)
    return generate, host((params, buf))
