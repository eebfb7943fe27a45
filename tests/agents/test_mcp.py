"""The MCP server through the real `mcp` SDK's stdio client: every tool answers with the command
line's own JSON for the same call, a kernel handed over as text compiles, and a hostile kernel sent
by an agent is contained as one from the page is (it runs in the sandbox's worker)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from paths import KERNELS, REPO

from inspector.testing.browser import wait_for

pytest.importorskip("mcp", reason="the MCP SDK is installed by the test command (requirements-test.txt)")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

ADD = str(KERNELS / "add.py")
# what two runs of one command may differ in (how long it took, whether the cache answered)
VOLATILE = {"compile_seconds", "cached", "seconds", "elapsed_s", "wall_s"}


def cli(*argv: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "inspector", *argv, "--json"], cwd=REPO, capture_output=True,
                          text=True, timeout=900, env=dict(os.environ, PYTHONPATH=str(REPO)))
    return json.loads(done.stdout)


def steady(value):
    """`value` without the fields two runs of the same command may differ in."""
    if isinstance(value, dict):
        return {k: steady(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [steady(v) for v in value]
    return value


def call_tools(calls: list[tuple[str, dict]]) -> list[dict]:
    """Start `python -m inspector mcp`, list its tools, call each, and return the JSON answers."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "inspector", "mcp"], cwd=str(REPO),
                                   env=dict(os.environ, PYTHONPATH=str(REPO)))

    async def run() -> list[dict]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = {t.name for t in (await session.list_tools()).tools}
            assert listed == {"compile", "explain", "fix", "fits", "profile", "diff"}, listed
            out = []
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                # the SDK's 2.x names its fields in snake case, 1.x in camel case
                assert not getattr(result, "is_error", getattr(result, "isError", False)), result
                structured = getattr(result, "structured_content", getattr(result, "structuredContent", None))
                out.append(structured if structured is not None else json.loads(result.content[0].text))
            return out

    return anyio.run(run)


def unwrap(answer: dict) -> dict:
    """A tool's structured answer as the SDK carries it (a dict return may come wrapped as `result`)."""
    return answer["result"] if set(answer) == {"result"} else answer


def test_every_tool_answers_with_the_command_lines_json():
    shipped = str(REPO / "assets" / "profiles" / "add-h100.json")
    calls = [
        ("compile", {"file": ADD, "target": "sm_90"}),
        ("explain", {"file": ADD, "target": "sm_90", "args": {"n": "4095"}}),
        ("fix", {"file": ADD, "target": "sm_90"}),
        ("fits", {"file": ADD, "gpu": "H100"}),
        ("profile", {"saved": shipped}),
        ("diff", {"file": ADD, "target": "sm_90", "vs": "--num-warps 8"}),
    ]
    expected = [
        cli("compile", ADD, "--target", "sm_90"),
        cli("explain", ADD, "--target", "sm_90", "--arg", "n=4095"),
        cli("fix", ADD, "--target", "sm_90"),
        cli("fits", ADD, "--gpu", "H100"),
        cli("profile", "show", shipped),
        cli("diff", ADD, "--target", "sm_90", "--vs", "--num-warps 8"),
    ]
    answers = [unwrap(a) for a in call_tools(calls)]
    for (name, _), got, want in zip(calls, answers, expected):
        assert steady(got) == steady(want), name
    assert answers[0]["kernel"] == "add_kernel" and "ptx" in answers[0]["stages"]


def test_a_kernel_given_as_text_compiles_and_a_hostile_one_is_contained(tmp_path):
    token = secrets.token_hex(6)
    escaped = [tmp_path / f"escaped-{token}", Path.home() / f".inspector-mcp-{token}", REPO / f"mcp-{token}"]
    secret = tmp_path / "secret.txt"
    secret.write_text(f"secret-{token}")
    text = (KERNELS / "add.py").read_text()
    hostile = text.replace("import torch\n", "import torch\nimport os\n" + "".join(
        f"try:\n    open({str(p)!r}, 'w').write('escaped')\nexcept OSError:\n    pass\n" for p in escaped)
        + f"print('SEES THE SECRET' if os.path.exists({str(secret)!r}) else 'the secret is hidden')\n", 1)
    plain, attacked = call_tools([
        ("compile", {"source": text.replace("x + y", "x - y"), "name": "sub.py", "target": "gfx942"}),
        ("compile", {"source": hostile, "name": "hostile.py", "target": "sm_90"}),
    ])
    plain, attacked = unwrap(plain), unwrap(attacked)
    assert plain["error"] is None and plain["file"].endswith("sub.py") and "neg_lo" in plain["stages"]["amdgcn"]  # x - y: a packed add of -y
    assert attacked["error"] is None, attacked["error"]  # it still compiled, in the jail
    assert "the secret is hidden" in attacked["log"] and "SEES THE SECRET" not in attacked["log"]
    assert [p for p in escaped if p.exists()] == []
    # the texts lived as long as the server: its folder went with it
    given = Path(plain["file"]).parent.parent
    wait_for(lambda: not given.exists(), f"the server's folder of given texts ({given}) to be removed")
