"""An agent's short-lived server: initialize, one proposal, shutdown and exit at once (as the
VS Code e2e's propose.py and many scripts do). The exit must be clean: nothing written to the
closed pipe after the shutdown (the debounced publication of the proposal used to fire while
the process was ending, and a follower could start on a store the shutdown had closed)."""

from __future__ import annotations

from support.rawlsp import RawServer


def test_initialize_propose_shutdown_exit_leaves_no_error_behind(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "f.txt").write_text("a\nb\nc\n")
    uri = (root / "f.txt").resolve().as_uri()
    for round_ in range(6):
        server = RawServer(root)
        try:
            server.initialize(wait_restored=False)
            edit = {
                "changes": {
                    uri: [
                        {
                            "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}},
                            "newText": "B\n",
                        }
                    ]
                }
            }
            answer = server.call("stet/propose", {"proposalId": f"p{round_}", "edit": edit})
            assert answer["hunks"], answer
            code = server.stop()  # shutdown, exit: while the proposal's publication is still due
        finally:
            server.kill()
        stderr = server.tail()
        assert code == 0, stderr
        assert "Traceback" not in stderr and "ERROR" not in stderr and "WARNING" not in stderr, stderr
