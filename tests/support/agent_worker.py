"""A scripted agent worker: talks to `stet mcp` with the official MCP client over stdio.

    python agent_worker.py ROOT PLAN_JSON [--stay]

PLAN_JSON is a list of [tool, arguments]. For each call it prints one JSON line
{"tool", "isError", "text", "data"}; then "DONE", and with --stay it waits to be killed
(a worker that dies mid-task). STET_* variables of its environment reach the MCP server.
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client


def server_params(root: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k.startswith("STET_")}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "stet", "mcp", "--agent", "worker"], cwd=root, env=env
    )


async def main(root: str, plan: list, stay: bool) -> None:
    async with stdio_client(server_params(root)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for tool, arguments in plan:
                try:
                    result = await session.call_tool(tool, arguments)
                except Exception as exc:  # the server went away: say so and stop
                    print(json.dumps({"tool": tool, "died": repr(exc)}), flush=True)
                    return
                text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
                print(
                    json.dumps(
                        {
                            "tool": tool,
                            "isError": bool(result.is_error),
                            "text": text,
                            "data": result.structured_content,
                        }
                    ),
                    flush=True,
                )
            print("DONE", flush=True)
            if stay:
                await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], json.loads(sys.argv[2]), "--stay" in sys.argv[3:])
