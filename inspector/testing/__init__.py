"""Harnesses for trying the inspector from outside, shipped with it as `torch.testing` and
`streamlit.testing` are, so that the tests, the benchmarks and a user's own CI import one package:

- `browser`: the app served on a free port and driven in a real Chromium (Playwright);
- `processes`: the processes something started, by their parent links in /proc (what is left after it);
- `guard_repo`: a small repository of Triton kernels, and the two edits that regress it, for the guard.

Nothing else in `inspector` imports these.
"""
