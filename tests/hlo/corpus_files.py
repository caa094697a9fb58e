"""What make_corpus_torch_xla.py and make_corpus_tf.py share: writing a case's files and their
manifest into tests/hlo/data (the layout make_corpus.py writes for JAX's cases)."""
import os

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def write_case(name, proto, text, ins, outs, rtol, atol):
    """NAME.pb, NAME.hlo, NAME.in<i>.npy, NAME.out<i>.npy; returns the case's manifest line."""
    os.makedirs(HERE, exist_ok=True)
    with open(os.path.join(HERE, name + ".pb"), "wb") as f:
        f.write(proto)
    with open(os.path.join(HERE, name + ".hlo"), "w") as f:
        f.write(text)
    for i, a in enumerate(ins):
        np.save(os.path.join(HERE, f"{name}.in{i}.npy"), a)
    for i, o in enumerate(outs):
        np.save(os.path.join(HERE, f"{name}.out{i}.npy"), o)
    return f"{name} {len(ins)} {len(outs)} {rtol:g} {atol:g}"


def write_manifest(manifest, lines, only):
    """Writes data/MANIFEST.<manifest>: lines ({name: line}); with only (some names were asked
    for) the manifest's other lines stay."""
    path = os.path.join(HERE, manifest)
    kept = {}
    if only and os.path.exists(path):
        with open(path) as f:
            kept = {ln.split()[0]: ln for ln in f.read().splitlines() if ln.strip()}
    kept.update(lines)
    with open(path, "w") as f:
        f.write("\n".join(kept.values()) + "\n")
    print(f"{len(lines)} cases written to {HERE}")
