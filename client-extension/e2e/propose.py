"""Talks to a short-lived `stet serve`, as an agent would: initialize, the calls, shutdown.

Usage: python propose.py WORKSPACE PARAMS_JSON_FILE [SERVER_CMD...]
PARAMS_JSON_FILE holds either one stet/propose params object, or a list of {"method": ..., "params": ...}
calls made in order (e.g. several proposals, or stet/listHunks). Prints the result of the single proposal,
or the list of results, as JSON. (default server command: this Python with -m stet serve.)
Plain JSON-RPC over stdio, so it depends on nothing but the server.
"""
import json
import subprocess
import sys
from pathlib import Path


def send(proc, msg):
    body = json.dumps(msg).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def read(proc):
    length = None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("server closed its output (see its stderr above)")
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(proc.stdout.read(length))


def call(proc, id_, method, params):
    send(proc, {"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
    while True:
        msg = read(proc)
        if msg.get("id") == id_ and "method" not in msg:
            if "error" in msg:
                raise SystemExit(f"{method} failed: {msg['error']}")
            return msg.get("result")
        if "id" in msg and "method" in msg:
            # A request from the server (configuration, registerCapability, applyEdit...): answer plainly.
            result = [None] * len(msg.get("params", {}).get("items", [])) if msg["method"] == "workspace/configuration" else None
            if msg["method"] == "workspace/applyEdit":
                result = {"applied": False}
            send(proc, {"jsonrpc": "2.0", "id": msg["id"], "result": result})


def main():
    workspace = Path(sys.argv[1]).resolve()
    given = json.loads(Path(sys.argv[2]).read_text())
    calls = given if isinstance(given, list) else [{"method": "stet/propose", "params": given}]
    cmd = sys.argv[3:] or [sys.executable, "-m", "stet", "serve"]
    proc = subprocess.Popen(cmd, cwd=workspace, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    results = []
    try:
        root = workspace.as_uri()
        call(proc, 1, "initialize", {
            "processId": None, "rootUri": root, "capabilities": {},
            "workspaceFolders": [{"uri": root, "name": workspace.name}],
        })
        send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
        for i, c in enumerate(calls):
            results.append(call(proc, 10 + i, c["method"], c["params"]))
        call(proc, 3, "shutdown", None)
        send(proc, {"jsonrpc": "2.0", "method": "exit", "params": None})
        proc.stdin.close()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    print(json.dumps(results if isinstance(given, list) else results[0]))


if __name__ == "__main__":
    main()
