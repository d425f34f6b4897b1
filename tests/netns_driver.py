"""Runs inside a network namespace of its own (see tests/netns.py); not a test module.

Brings up loopback with the extra address 10.200.0.1, starts a recording Ollama stand-in there
("remote": not loopback) and one on 127.0.0.1 ("local"), runs the `mem` commands of the spec (a
JSON file named by argv[1]) with `{remote}` and `{local}` in arguments and environment replaced by
the stand-ins' URLs, and prints one JSON document: each run's exit code and output, and every
request each stand-in received. Nothing here can reach an address outside the namespace.
"""

import json
import os
import subprocess
import sys

REMOTE_ADDRESS = "10.200.0.1"


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "addr", "add", f"{REMOTE_ADDRESS}/32", "dev", "lo"], check=True)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from ollama_stub import OllamaStub

    stubs = {"remote": OllamaStub(REMOTE_ADDRESS), "local": OllamaStub("127.0.0.1")}
    for stub in stubs.values():
        if spec.get("chat_reply") is not None:
            stub.chat_reply = lambda body, reply=spec["chat_reply"]: reply

    def sub(value: str) -> str:
        return (str(value).replace("{remote}", stubs["remote"].url).replace("{local}", stubs["local"].url)
                .replace("{remote_hostport}", stubs["remote"].url.split("://", 1)[1]))

    runs = []
    try:
        for run in spec["runs"]:
            env = dict(os.environ, **{k: sub(v) for k, v in run.get("env", {}).items()})
            if "write" in run:  # a file whose text names a stand-in (e.g. memtool.toml)
                with open(run["write"], "w", encoding="utf-8") as f:
                    f.write(sub(run["text"]))
                runs.append({"write": run["write"]})
                continue
            args = [sub(a) for a in run["args"]]
            if "mcp" in run:
                runs.append({"args": run["args"], "tools": mcp_calls(args, env, run["mcp"])})
                continue
            proc = subprocess.run([sys.executable, "-m", "memtool", *args], env=env,
                                  capture_output=True, text=True, timeout=120)
            runs.append({"args": run["args"], "returncode": proc.returncode, "stdout": proc.stdout,
                         "stderr": proc.stderr})
    finally:
        for stub in stubs.values():
            stub.stop()
    print(json.dumps({"urls": {k: s.url for k, s in stubs.items()}, "runs": runs,
                      "requests": {k: s.requests for k, s in stubs.items()}}))


def mcp_calls(args: list[str], env: dict, calls: list[dict]) -> list[dict]:
    """Call tools of `mem ARGS mcp` through the MCP SDK client; each result's text and error flag."""
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "memtool", *args, "mcp"], env=env)
        out = []
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for call in calls:
                    result = await session.call_tool(call["tool"], call.get("args", {}))
                    out.append({"tool": call["tool"], "error": bool(result.is_error),
                                "text": "\n".join(getattr(c, "text", "") for c in result.content)})
        return out

    return asyncio.run(main())


if __name__ == "__main__":
    main()
