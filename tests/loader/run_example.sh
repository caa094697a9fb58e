#!/usr/bin/env bash
# Runs the README's C example from the repository root and checks what it prints.
# Usage: run_example.sh EXAMPLE_BINARY
out=$("$1" 2>&1)  # the default plugin "cjrt", found next to libcjrt, as in the README
rc=$?
echo "$out"
[ $rc -eq 0 ] && [ "$out" = "(a + b) * a = [[11, 44], [99, 176]]" ]
