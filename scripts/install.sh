#!/bin/sh
# Install what the app needs (and with --test, what the tests need) without touching an existing
# torch/triton: on a GPU machine the installed torch pins its triton and must stay as it is.
set -e
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if ! $PY -c "import torch, triton" 2>/dev/null; then
    $PY -m pip install -q -r requirements-torch.txt
fi
$PY -m pip install -q -r requirements.txt
if [ "$1" = "--test" ]; then
    $PY -m pip install -q -r requirements-test.txt
fi
