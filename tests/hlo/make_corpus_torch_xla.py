"""Adds torch_xla's HLO programs to tests/hlo/data (cases named torch_*), with torch_xla CPU's outputs.

For each case NAME it runs a small PyTorch program on torch_xla's own CPU client (PJRT_DEVICE=CPU)
and, before the graph is executed, captures what torch_xla would compile for the tensors it
returns (the lazy graph rooted at them):
  NAME.pb            torch_xla._XLAC._get_xla_tensors_hlo_proto(roots): the xla.HloModuleProto
  NAME.hlo           torch_xla._XLAC._get_xla_tensors_hlo(roots): the same module as HLO text
  NAME.in<i>.npy     the value of the module's parameter i: the device data the graph reads, in
                     the order _get_tensors_xla_device_data_node(roots) gives (the order of the
                     module's parameters; checked against their shapes), weights, batch and the
                     scalars torch_xla passes as data (learning rate, ...) alike
  NAME.out<i>.npy    root i after torch_xla.sync(): what torch_xla's CPU client computed
and one line per case in MANIFEST.torch_xla (`NAME NUM_INPUTS NUM_OUTPUTS RTOL ATOL`, as MANIFEST).

Run with a venv holding torch 2.9 and torch-xla 2.9 (python/requirements-torch-xla.txt):
  PJRT_DEVICE=CPU /work/venv-torch/bin/python tests/hlo/make_corpus_torch_xla.py [NAME...]
"""
import os
import re
import sys

os.environ.setdefault("PJRT_DEVICE", "CPU")
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch_xla  # noqa: E402

from corpus_files import write_case, write_manifest  # noqa: E402

XLAC = torch_xla._XLAC
PREFIX = "torch_"

CASES = []


def case(name, rtol=1e-5, atol=1e-5):
    def deco(fn):
        CASES.append((PREFIX + name, fn, rtol, atol))
        return fn
    return deco


def gen(seed):
    return torch.Generator().manual_seed(seed)


def sgd_step(net, loss, lr=0.1, momentum=0.0):
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum)
    opt.zero_grad()
    loss.backward()
    opt.step()


@case("mlp_step", rtol=1e-4, atol=1e-5)
def mlp_step(dev):
    """An MLP's forward, backward and SGD step: loss and the updated weights."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(),
                        nn.Linear(32, 10)).to(dev)
    g = gen(1)
    x = torch.randn(8, 16, generator=g).to(dev)
    y = torch.randint(0, 10, (8,), generator=g).to(dev)
    loss = F.cross_entropy(net(x), y)
    sgd_step(net, loss)
    return [loss] + list(net.parameters())


@case("conv_bn_step", rtol=1e-4, atol=1e-5)
def conv_bn_step(dev):
    """A conv net with batch norm (training mode), max-pool and a linear head: one SGD step
    with momentum; loss, updated weights and batch norm's running statistics."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Conv2d(6, 4, 3, stride=2), nn.Flatten(),
                        nn.Linear(4 * 1 * 1, 5)).to(dev)
    g = gen(2)
    x = torch.randn(4, 3, 6, 6, generator=g).to(dev)
    y = torch.randint(0, 5, (4,), generator=g).to(dev)
    loss = F.cross_entropy(net(x), y)
    sgd_step(net, loss, lr=0.05, momentum=0.9)
    bn = net[1]
    return [loss] + list(net.parameters()) + [bn.running_mean, bn.running_var]


@case("embed_ln_softmax", rtol=1e-4, atol=1e-5)
def embed_ln_softmax(dev):
    """Token embedding, layer norm, a projection and softmax / log-softmax over the vocabulary,
    plus the gradient of a loss with respect to the embedding table (an index scatter-add)."""
    torch.manual_seed(0)
    emb = nn.Embedding(20, 8).to(dev)
    ln = nn.LayerNorm(8).to(dev)
    proj = nn.Linear(8, 20).to(dev)
    ids = torch.randint(0, 20, (2, 5), generator=gen(3)).to(dev)
    h = ln(emb(ids))
    logits = proj(h)
    probs = torch.softmax(logits, dim=-1)
    logp = F.log_softmax(logits, dim=-1)
    loss = -logp.gather(-1, ids.unsqueeze(-1)).mean()
    loss.backward()
    return [probs, loss, emb.weight.grad, ln.weight.grad]


@case("lstm_cell", rtol=1e-4, atol=1e-5)
def lstm_cell(dev):
    """nn.LSTMCell unrolled over four steps of a sequence."""
    torch.manual_seed(0)
    cell = nn.LSTMCell(6, 10).to(dev)
    xs = torch.randn(4, 3, 6, generator=gen(4)).to(dev)
    h = torch.zeros(3, 10).to(dev)
    c = torch.zeros(3, 10).to(dev)
    outs = []
    for t in range(4):
        h, c = cell(xs[t], (h, c))
        outs.append(h)
    return [torch.stack(outs), c]


@case("int_index")
def int_index(dev):
    """Integer arithmetic and indexing: index_select, gather, scatter_add, index_put, masks,
    argmax, topk, cumsum, integer division and bit operations on int64 and int32."""
    g = gen(5)
    a = torch.randint(-50, 50, (6, 7), generator=g).to(dev)
    b = torch.randint(1, 9, (6, 7), generator=g).to(torch.int32).to(dev)
    idx = torch.randint(0, 6, (4,), generator=g).to(dev)
    col = torch.randint(0, 7, (6, 3), generator=g).to(dev)
    x = torch.randn(6, 7, generator=g).to(dev)
    sel = torch.index_select(x, 0, idx)
    gat = torch.gather(a, 1, col)
    sc = torch.zeros(6, 7, dtype=torch.int64, device=dev).scatter_add(1, col, gat)
    put = x.clone()
    put[idx, idx] = 3.0
    masked = a.masked_fill(a > 10, -1)
    am = torch.argmax(x, dim=1)
    tv, ti = torch.topk(x, 3, dim=1)
    cs = torch.cumsum(a, dim=0)
    bi = b.to(torch.int64)
    div = torch.div(a, bi, rounding_mode="floor")
    rem = torch.remainder(a, bi)
    bits = (b & 5) | (b << 2) ^ (b >> 1)
    where = torch.where(x > 0, a, -a)
    cmp = (a == bi) | (a < -20)
    return [sel, gat, sc, put, masked, am, tv, ti, cs, div, rem, bits, where, cmp]


@case("reductions", rtol=1e-4, atol=1e-5)
def reductions(dev):
    """A mix of reductions: sum, mean, var/std, max/min with indices, prod, logsumexp, norms,
    any/all and an amax over several dimensions."""
    g = gen(6)
    x = torch.randn(4, 5, 6, generator=g).to(dev)
    s = x.sum(dim=(0, 2))
    m = x.mean(dim=1)
    v = x.var(dim=2)
    sd = x.std(dim=0, unbiased=False)
    mx, imx = x.max(dim=1)
    mn = x.min()
    pr = torch.prod(x[:, :2, 0] * 0.5 + 1, dim=1)
    lse = torch.logsumexp(x, dim=2)
    n2 = torch.linalg.vector_norm(x, dim=(1, 2))
    n1 = x.abs().sum(dim=-1).max(dim=-1).values
    anyp = (x > 2).any(dim=2)
    allp = (x > -3).all(dim=0)
    amax = torch.amax(x, dim=(0, 1))
    return [s, m, v, sd, mx, imx, mn, pr, lse, n2, n1, anyp, allp, amax]


@case("attention_step", rtol=1e-4, atol=1e-5)
def attention_step(dev):
    """A causal self-attention block (scaled_dot_product_attention, GELU MLP, residuals) and
    the gradients of a loss with respect to the input projection."""
    torch.manual_seed(0)
    qkv = nn.Linear(8, 24).to(dev)
    out = nn.Linear(8, 8).to(dev)
    mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8)).to(dev)
    x = torch.randn(2, 5, 8, generator=gen(7)).to(dev)
    q, k, v = qkv(x).view(2, 5, 3, 2, 4).permute(2, 0, 3, 1, 4)
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    h = x + out(a.transpose(1, 2).reshape(2, 5, 8))
    y = h + mlp(F.layer_norm(h, (8,)))
    loss = y.pow(2).mean()
    loss.backward()
    return [y, loss, qkv.weight.grad, qkv.bias.grad]


@case("misc_ops", rtol=1e-4, atol=1e-5)
def misc_ops(dev):
    """Sorting, interpolation, padding, a transposed convolution and cumprod."""
    g = gen(8)
    x = torch.randn(1, 2, 4, 4, generator=g).to(dev)
    w = torch.randn(2, 3, 3, 3, generator=g).to(dev)
    v = torch.randn(3, 7, generator=g).to(dev)
    sv, si = torch.sort(v, dim=1, descending=True)
    near = F.interpolate(x, scale_factor=2, mode="nearest")
    bil = F.interpolate(x, size=(8, 8), mode="bilinear", align_corners=False)
    refl = F.pad(x, (1, 2, 2, 1), mode="reflect")
    ct = F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)
    cp = torch.cumprod(v * 0.5 + 1, dim=1)
    return [sv, si, near, bil, refl, ct, cp]


@case("half_types", rtol=2e-2, atol=2e-2)
def half_types(dev):
    """bfloat16 and float16 arithmetic (the tolerance is bfloat16's)."""
    v = torch.randn(3, 7, generator=gen(9)).to(dev)
    vb = v.to(torch.bfloat16)
    mb = (vb @ vb.t()).relu() + vb.sum()
    vh = v.to(torch.float16)
    sh = torch.softmax(vh * 2, dim=1)
    return [mb, sh, (vb.float() * vh.float()).to(torch.bfloat16)]


def to_numpy(t):
    """bfloat16 goes out as 2-byte void ('|V2'), which cjrt's .npy reader takes as bfloat16 (as
    ml_dtypes' '<V2'); numpy has no bfloat16 of its own."""
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.dtype("V2"))
    return t.numpy()


def capture(name, fn):
    dev = torch_xla.device()
    torch_xla.sync()
    roots = fn(dev)
    proto = XLAC._get_xla_tensors_hlo_proto(roots)
    text = XLAC._get_xla_tensors_hlo(roots)
    _, params = XLAC._get_tensors_xla_device_data_node(roots)
    ins = [to_numpy(p) for p in params]
    torch_xla.sync()
    outs = [to_numpy(r) for r in roots]
    # the module's parameters, in order, must have the shapes of the device data found
    entry = [ln for ln in text.splitlines() if ln.startswith("ENTRY")][0]
    sig = re.findall(r"p(\d+)\.\d+: \w+\[([\d,]*)\]", entry.split("->")[0])
    shapes = [tuple(int(d) for d in dims.split(",") if d) for _, dims in sig]
    if [int(i) for i, _ in sig] != list(range(len(ins))) or shapes != [a.shape for a in ins]:
        raise SystemExit(f"{name}: parameters {shapes} are not the device data's "
                         f"{[a.shape for a in ins]}")
    return proto, text, ins, outs


def main():
    only = set(sys.argv[1:])
    lines = {}
    for name, fn, rtol, atol in CASES:
        if only and name not in only:
            continue
        proto, text, ins, outs = capture(name, fn)
        lines[name] = write_case(name, proto, text, ins, outs, rtol, atol)
    write_manifest("MANIFEST.torch_xla", lines, only)


if __name__ == "__main__":
    main()
