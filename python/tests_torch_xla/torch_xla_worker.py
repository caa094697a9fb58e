"""One torch_xla training run, printed as JSON: `python torch_xla_worker.py MODE`.

The backend comes from the environment, as torch_xla reads it at import (PJRT_DEVICE=CPU for
torch_xla's own CPU client, PJRT_DEVICE=LIBRARY + PJRT_LIBRARY_PATH for a plugin). Modes:
  single   one device, the whole batch
  threads  torch_xla's thread-per-device replication: one replica per addressable device, each
           training on its own slice of the batch (programs compiled for num_replicas = device
           count, each replica run on its device with execute_device). The replicas do not
           all-reduce: torch_xla 2.9 counts processes as its world, and an explicit all_reduce
           across these threads deadlocks on torch_xla's own CPU client.
  spmd     torch_xla's SPMD mode: one program over all devices, the batch sharded on a 1-D mesh
Each mode trains a small conv net (conv, relu, max-pool, linear; SGD) for STEPS steps with
torch_xla's default settings, so programs reach the backend as HloModuleProtos."""
import json
import sys

import numpy as np
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

STEPS = 4


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(16, 3, 16, 16, generator=g), torch.randint(0, 10, (16,), generator=g)


def _make():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(8 * 8 * 8, 10))


# initial weights made once, on the CPU: torch's global generator is shared by the replica threads
torch.manual_seed(0)
INIT = {k: v.clone() for k, v in _make().state_dict().items()}


def model(dev):
    net = _make()
    net.load_state_dict(INIT)
    return net.to(dev)


def train(dev, x, y, step_fn, before_step=None):
    net = model(dev)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    losses = []
    for _ in range(STEPS):
        if before_step:
            before_step()
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        step_fn(opt)
        xm.mark_step()
        losses.append(float(loss.item()))
    return losses, [float(p.detach().cpu().double().sum()) for p in net.parameters()]


def single():
    dev = torch_xla.device()
    X, Y = data()
    losses, sums = train(dev, X.to(dev), Y.to(dev), lambda o: o.step())
    return {"devices": 1, "losses": [losses], "param_sums": [sums]}


def threads():
    from torch_xla._internal import pjrt
    out = {}

    def fn(index):
        dev = torch_xla.device()
        ndev = len(xm.get_xla_supported_devices())
        r = xr.global_ordinal()
        X, Y = data()
        out[r] = (ndev,) + train(dev, X[r::ndev].to(dev), Y[r::ndev].to(dev), lambda o: o.step())

    pjrt.spawn_threads(fn)
    ranks = sorted(out)
    return {"devices": out[ranks[0]][0], "losses": [out[r][1] for r in ranks],
            "param_sums": [out[r][2] for r in ranks]}


def spmd():
    import torch_xla.distributed.spmd as xs
    xr.use_spmd()
    n = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(n), (n,), ("data",))
    dev = torch_xla.device()
    X, Y = data()
    x, y = X.to(dev), Y.to(dev)
    xs.mark_sharding(x, mesh, ("data", None, None, None))
    xs.mark_sharding(y, mesh, ("data",))
    losses, sums = train(dev, x, y, lambda o: o.step())
    return {"devices": n, "losses": [losses], "param_sums": [sums]}


if __name__ == "__main__":
    mode = sys.argv[1]
    res = {"single": single, "threads": threads, "spmd": spmd}[mode]()
    print("RESULT " + json.dumps(res), flush=True)
