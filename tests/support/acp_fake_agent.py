"""A fake ACP agent for the relay's tests and benchmark (stdlib only): JSON-RPC on stdio, one
message per line, as an ACP agent speaks it.

    python acp_fake_agent.py [--version N] [--name NAME] [--received PATH] [--sent PATH]
                             [--pidfile PATH] [--crlf] [--ignore-eof] [--ignore-term]

It answers `initialize` (the protocol version: the smaller of the client's and its own, `--version`,
default 1), `session/new`, `session/load` and `session/prompt`; any other request gets "method not
found", a notification nothing. What a prompt does is scripted by its text: each word is a step,
done in order before the prompt's answer (`end_turn`):

    update          a session/update agent_message_chunk (with non-ASCII text)
    diff            a session/update tool_call whose content is a diff of a.py in the session's cwd
                    (`x = 1` to `x = 2`, tool call `call-1`)
    diff:NAME[:ID]  the same for the file NAME in the session's cwd (tool call ID, default `call-NAME`)
    write           an fs/write_text_file request to the client (a.py: `x = 2`); its answer is reported
    write:NAME      the same for the file NAME
    bigdiff:BYTES   a tool call `call-big` whose diff makes a new file big.txt of about BYTES bytes
    whole:NAME      a tool call `call-whole` whose diff is the whole of the file NAME (as Gemini CLI
                    sends it), its middle line changed
    scatter:NAME    the same with every other line changed
    permission      a session/request_permission request to the client (for tool call `call-1`,
                    options allow and reject); its answer is reported
    permission:NAME[:ID]  the same for the tool call ID (default `call-NAME`) that edits NAME
    sid-write, sid-permission   the same with a string request id
    slow:SECONDS    sleep (the agent is slow)
    ticks:N         N agent_message_chunk updates 0.2 s apart, reading nothing meanwhile
    crash           exit 3 at once, without answering the prompt
    nonjson         a line that is not JSON
    huge:BYTES      a line of BYTES bytes that is not JSON (no newline in it)
    crlf            the next line it sends ends with \\r\\n

The script is the prompt's first text block (a block Stet adds after it is not read as steps).
A reported answer is a session/update agent_message_chunk whose text is `answer ID: JSON`.

When the peers agree version 2 (`--version 2` and a client offering 2), it speaks ACP v2's draft
(https://agentclientprotocol.com/protocol/v2/migration): `info` and `capabilities` in `initialize`,
`session/resume` instead of `session/load`, a prompt answered `{}` at once and its turn reported by
a `user_message`, `state_update` running ... idle with the stop reason; every message chunk has a
`messageId`; `diff` is a `tool_call_update` creating the tool call and another patching in its
content (a v2 diff: `changes` and a `git_patch`); `permission` names the tool call in its
`subject`; and, there being no client file system in v2, `write` writes the file itself and
patches the tool call `completed`. Its steps are the words of the prompt's first block (what
Stet appends is not a script).
`--received` / `--sent` record the bytes it read / wrote, exactly; `--ignore-eof` keeps it alive
after its stdin ends (a hung agent); `--ignore-term` makes it ignore SIGTERM (only SIGKILL ends it).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import signal
import sys
import time


class Agent:
    def __init__(self, opts: argparse.Namespace) -> None:
        self.opts = opts
        self.inp = sys.stdin.buffer
        self.out = sys.stdout.buffer
        self.received = open(opts.received, "ab") if opts.received else None
        self.sent = open(opts.sent, "ab") if opts.sent else None
        self.next_id = 0
        self.sessions: dict[str, str] = {}  # session id -> cwd
        self.crlf_once = opts.crlf
        self.pending: list[dict] = []  # messages read while waiting for an answer
        self.v2 = False  # the peers agreed protocol version 2
        self.messages = 0  # v2 message ids
        self.calls = 0  # v2 tool call ids (unique in a session, as v2 says)

    def send_bytes(self, data: bytes) -> None:
        if self.sent is not None:
            self.sent.write(data)
            self.sent.flush()
        self.out.write(data)
        self.out.flush()

    def send(self, body: dict) -> None:
        end = b"\r\n" if self.crlf_once else b"\n"
        self.crlf_once = self.opts.crlf
        # Python's default separators and raw UTF-8: bytes a re-serialising proxy would change.
        self.send_bytes(json.dumps(body, ensure_ascii=False).encode() + end)

    def read(self) -> dict | None | bool:
        """The next message: a dict, None for a line that is not one, False at EOF."""
        line = self.inp.readline()
        if not line:
            return False
        if self.received is not None:
            self.received.write(line)
            self.received.flush()
        try:
            body = json.loads(line)
        except ValueError:
            return None
        return body if isinstance(body, dict) else None

    def ask(self, method: str, params: dict, string_id: bool) -> None:
        self.next_id += 1
        rid: int | str = f"agent-{self.next_id}" if string_id else self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            msg = self.read()
            if msg is False:
                raise SystemExit(0)
            if isinstance(msg, dict) and "method" not in msg and msg.get("id") == rid:
                break
            if isinstance(msg, dict):
                self.pending.append(msg)
        self.update(params.get("sessionId", ""), f"answer {json.dumps(rid)}: {json.dumps(msg, sort_keys=True)}")

    def update(self, session: str, text: str) -> None:
        content = {"type": "text", "text": text}
        update: dict = {"sessionUpdate": "agent_message_chunk", "content": content}
        if self.v2:
            self.messages += 1
            update["messageId"] = f"msg-{self.messages}"
        self.notify(session, update)

    def notify(self, session: str, update: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}})

    def step_v2(self, word: str, session: str, path: str) -> bool:
        """A step in v2's shapes; False: the same as in v1."""
        options = [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ]
        if word == "diff":
            with open(path) as f:
                before = f.read()
            after = before.replace("x = 1\n", "x = 2\n")
            lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True), path, path)
            patch = f"diff --git {path} {path}\n" + "".join(lines)
            diff = {
                "type": "diff",
                "changes": [{"operation": "modify", "path": path, "fileType": "text", "mimeType": "text/x-python"}],
                "patch": {"format": "git_patch", "text": patch},
            }
            self.calls += 1
            call = {"sessionUpdate": "tool_call_update", "toolCallId": f"call-{self.calls}"}
            self.notify(session, {**call, "title": "Edit a.py", "kind": "edit", "status": "pending"})
            self.notify(
                session, {**call, "content": [diff], "locations": [{"path": path}], "futureField": {"kept": True}}
            )
        elif word in ("permission", "sid-permission"):
            params = {
                "sessionId": session,
                "title": "Edit a.py?",
                "subject": {"type": "tool_call", "toolCall": {"toolCallId": f"call-{self.calls}"}},
                "options": options,
            }
            self.notify(session, {"sessionUpdate": "state_update", "state": "requires_action"})
            self.ask("session/request_permission", params, word.startswith("sid-"))
            self.notify(session, {"sessionUpdate": "state_update", "state": "running"})
        elif word == "write":
            with open(path, "w") as f:
                f.write("x = 2\n")
            done = {"sessionUpdate": "tool_call_update", "toolCallId": f"call-{self.calls}", "status": "completed"}
            self.notify(session, done)
        else:
            return False
        return True

    def step(self, word: str, session: str) -> None:
        cwd = self.sessions.get(session, os.getcwd())
        word, _, arg = (
            word.partition(":")
            if word.startswith(("diff:", "write:", "bigdiff:", "permission:", "whole:", "scatter:"))
            else (word, "", "")
        )
        arg, _, call = arg.partition(":")
        name = arg if word in ("diff", "write", "permission", "whole", "scatter") and arg else "a.py"
        call = call or (f"call-{arg}" if arg else "call-1")
        path = os.path.join(cwd, name)
        if self.v2 and self.step_v2(word, session, path):
            return
        if word == "update":
            self.update(session, "héllo — wörld ✓")
        elif word == "bigdiff":
            size = int(arg)
            text = "".join(f"line {i:09d} of a huge new file\n" for i in range(size // 32 + 1))
            diff = {"type": "diff", "path": os.path.join(cwd, "big.txt"), "oldText": None, "newText": text}
            update = {"sessionUpdate": "tool_call", "toolCallId": "call-big", "title": "Write big.txt", "kind": "edit"}
            update.update(status="pending", content=[diff])
            self.send(
                {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}}
            )
        elif word in ("whole", "scatter"):
            with open(path, encoding="utf-8", newline="") as f:
                old = f.read()
            lines = old.splitlines(keepends=True)
            for i in range(len(lines) // 2, len(lines) // 2 + 1) if word == "whole" else range(0, len(lines), 2):
                lines[i] = "changed by the agent\n"
            diff = {"type": "diff", "path": path, "oldText": old, "newText": "".join(lines)}
            update = {"sessionUpdate": "tool_call", "toolCallId": "call-whole", "title": f"Edit {name}", "kind": "edit"}
            update.update(status="pending", content=[diff])
            self.send(
                {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}}
            )
        elif word == "diff":
            diff = {"type": "diff", "path": path, "oldText": "x = 1\n", "newText": "x = 2\n"}
            update = {
                "sessionUpdate": "tool_call",
                "toolCallId": call,
                "title": f"Edit {name}",
                "kind": "edit",
                "status": "pending",
                "content": [{"type": "content", "content": {"type": "text", "text": "edit"}}, diff],
                "locations": [{"path": path}],
                "futureField": {"kept": True},
            }
            self.send(
                {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}}
            )
        elif word in ("write", "sid-write"):
            params = {"sessionId": session, "path": path, "content": "x = 2\n"}
            self.ask("fs/write_text_file", params, word.startswith("sid-"))
        elif word in ("permission", "sid-permission"):
            options = [
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ]
            params = {
                "sessionId": session,
                "toolCall": {"toolCallId": call, "title": f"Edit {name}"},
                "options": options,
            }
            self.ask("session/request_permission", params, word.startswith("sid-"))
        elif word.startswith("slow:"):
            # In short sleeps: a SIGINT that came just before a sleep began raises at the next one
            # (Python runs its handler between sleeps, not within one it had not yet begun).
            end = time.monotonic() + float(word.split(":", 1)[1])
            while (left := end - time.monotonic()) > 0:
                time.sleep(min(left, 0.1))
        elif word.startswith("ticks:"):
            for i in range(int(word.split(":", 1)[1])):
                self.update(session, f"tick {i}")
                time.sleep(0.2)
        elif word == "crash":
            os._exit(3)
        elif word == "nonjson":
            self.send_bytes(b"this is not json {\n")
        elif word.startswith("huge:"):
            self.send_bytes(b"h" * int(word.split(":", 1)[1]) + b"\n")
        elif word == "crlf":
            self.crlf_once = True

    def answer(self, msg: dict) -> None:
        method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if "id" not in msg:
            return  # a notification (session/cancel...)
        if method == "initialize":
            theirs = params.get("protocolVersion", 1)
            version = min(theirs, self.opts.version) if isinstance(theirs, int) else self.opts.version
            self.v2 = version == 2
            result = {
                "protocolVersion": version,
                "agentCapabilities": {"loadSession": True},
                "agentInfo": {"name": self.opts.name, "version": "0.1.0"},
                "authMethods": [],
            }
            if self.v2:
                info = {"name": self.opts.name, "title": "Fake Agent", "version": "0.1.0"}
                result = {"protocolVersion": 2, "info": info, "capabilities": {"session": {}}, "authMethods": []}
        elif method == "session/new":
            sid = f"sess-{len(self.sessions) + 1}"
            self.sessions[sid] = params.get("cwd") or os.getcwd()
            result = {"sessionId": sid}
        elif method == "session/load" and not self.v2:
            self.sessions[params.get("sessionId", "")] = params.get("cwd") or os.getcwd()
            result = None
        elif method == "session/resume" and self.v2:
            self.sessions[params.get("sessionId", "")] = params.get("cwd") or os.getcwd()
            result = {"configOptions": []}
        elif method == "session/prompt" and self.v2:
            self.send({"jsonrpc": "2.0", "id": rid, "result": {}})  # accepted: the turn goes on in updates
            self.turn_v2(params)
            return
        elif method == "session/prompt":
            session = params.get("sessionId", "")
            texts = [
                b.get("text", "") for b in params.get("prompt", []) if isinstance(b, dict) and b.get("type") == "text"
            ]
            words = texts[0].split() if texts else []
            for word in words:
                self.step(word, session)
            result = {"stopReason": "end_turn"}
        else:
            self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no method {method}"}})
            return
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def turn_v2(self, params: dict) -> None:
        session = params.get("sessionId", "")
        prompt = [b for b in params.get("prompt", []) if isinstance(b, dict)]
        self.messages += 1
        self.notify(session, {"sessionUpdate": "user_message", "messageId": f"msg-{self.messages}", "content": prompt})
        self.notify(session, {"sessionUpdate": "state_update", "state": "running"})
        for word in str(prompt[0].get("text", "") if prompt else "").split():  # the first block: what to do
            self.step(word, session)
        self.notify(session, {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})

    def serve(self) -> None:
        while True:
            msg = self.pending.pop(0) if self.pending else self.read()
            if msg is False:
                if not self.opts.ignore_eof:
                    return
                while True:
                    time.sleep(3600)
            if isinstance(msg, dict):
                self.answer(msg)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", type=int, default=1)
    ap.add_argument("--name", default="fake-agent")
    ap.add_argument("--received")
    ap.add_argument("--sent")
    ap.add_argument("--pidfile")
    ap.add_argument("--crlf", action="store_true")
    ap.add_argument("--ignore-eof", action="store_true")
    ap.add_argument("--ignore-term", action="store_true")
    opts = ap.parse_args()
    # An agent ends at SIGINT and SIGHUP as a terminal program does, however the test run was
    # started: `nohup` and a shell's background job hand their children those signals ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    if opts.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if opts.pidfile:
        with open(opts.pidfile, "w") as f:
            f.write(str(os.getpid()))
    Agent(opts).serve()


if __name__ == "__main__":
    main()
