#!/bin/sh
# Install what the app needs (and with --test, what the tests need) without touching an existing
# torch/triton: on a GPU machine the installed torch pins its triton and must stay as it is.
set -e
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# A Debian package, through apt-get as root or with sudo; said on stderr when neither is there.
apt_install() {
    command -v apt-get >/dev/null 2>&1 || return 0
    if [ "$(id -u)" = 0 ]; then
        (apt-get update -q >/dev/null && apt-get install -y -q "$1" >/dev/null) || echo "install.sh: could not install $1" >&2
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        (sudo apt-get update -q >/dev/null && sudo apt-get install -y -q "$1" >/dev/null) || echo "install.sh: could not install $1" >&2
    else
        echo "install.sh: $1 is not installed and there is no root to install it: apt-get install $1" >&2
    fi
}
# The compile sandbox runs its worker manager under bubblewrap (Debian package bubblewrap);
# without it each compile is still jailed in namespaces of its own (see inspector/sandbox.py).
if ! command -v bwrap >/dev/null 2>&1; then
    apt_install bubblewrap
fi
if ! $PY -c "import torch, triton" 2>/dev/null; then
    $PY -m pip install -q -r requirements-torch.txt
fi
$PY -m pip install -q -r requirements.txt
# The inspector itself, editable (this checkout, as it changes): the `triton-inspector` command, and
# `import inspector` for the benchmarks and scripts wherever they run from. "compat" puts the
# checkout on the path with a one-line .pth: setuptools' default import hook would cost every Python
# start on this machine about 10 ms.
EDITABLE="--no-deps -e . --config-settings editable_mode=compat"
$PY -m pip install -q --no-build-isolation $EDITABLE 2>/dev/null || $PY -m pip install -q $EDITABLE
if [ "$1" = "--test" ]; then
    # The browser tests drive Debian's Chromium: Playwright cannot download its own browser on
    # these machines (inspector/testing/browser.py). Its headless shell (the same engine without
    # the desktop browser around it) costs the browser tests about a fifth less CPU.
    if ! command -v chromium-headless-shell >/dev/null 2>&1; then
        apt_install chromium-headless-shell
    fi
    $PY -m pip install -q -r requirements-test.txt
    # The tests compile with a second Triton release side by side (python -m inspector versions):
    # a venv under the inspector's home sharing this torch; kept, so a second run reuses it.
    $PY -m inspector versions add 3.6.0 >/dev/null || echo "install.sh: could not add Triton 3.6.0 as a side environment" >&2
fi
