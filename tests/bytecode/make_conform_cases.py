#!/usr/bin/env python3
"""Regenerates tests/bytecode/fixtures/conform/: a few conformance programs of the corpus
(../shared/conformance/stablehlo/testdata) written as StableHLO portable artifacts (VHLO in MLIR
bytecode) by upstream's writer, at several target versions. `cjrt conform` runs them through the
plugin exactly like their text originals (compile from bytecode, execute, the check custom calls
hold); the test `conform_bytecode` in tests/bytecode/CMakeLists.txt does that.

Run with a Python that has jax/jaxlib (the project's .venv or /work/venv-probe):
  python tests/bytecode/make_conform_cases.py [corpus testdata dir] [outdir]
"""
import os
import sys

from jaxlib.mlir.dialects import stablehlo

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    HERE, "..", "..", "..", "shared", "conformance", "stablehlo", "testdata")
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "fixtures", "conform")

# (corpus file, target version): versions spread over the range jaxlib's writer can target (chlo
# programs are left out: upstream's writer needs its chlo pre-serialization pipeline for them)
CASES = [
    ("gather_float32_10_10_10_int32_2_2.mlir", "current"),
    ("scatter_add_bfloat16_5_6_7_bfloat16_5_2_2_7.mlir", "current"),
    ("sort_complex128_5_7.mlir", "1.10.0"),
    ("reduce_window_max_float32_2_4.mlir", "1.12.0"),
    ("cumsum_float32_8_9.mlir", "0.9.0"),
    ("select_and_scatter_add_bfloat16_1_3_5_bfloat16_2_4_6.mlir", "1.0.0"),
    ("conv_general_dilated_float32_2_3_9_10_float32_3_3_4_5.mlir", "1.5.0"),
    ("dot_general_int16_4_3_float64_3_6.mlir", "0.14.0"),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    current = str(stablehlo.get_current_version())
    for name, target in CASES:
        target = current if target == "current" else target
        text = open(os.path.join(CORPUS, name)).read()
        data = stablehlo.serialize_portable_artifact_str(text, target)
        out = os.path.join(OUT, name[:-len(".mlir")] + ".v" + target.replace(".", "_") + ".mlir.bc")
        with open(out, "wb") as f:
            f.write(data)
        print(f"{out}: {len(data)} bytes (StableHLO {target})")


if __name__ == "__main__":
    main()
