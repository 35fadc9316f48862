"""`stet demo` is the one-command proof: it must keep working."""

import subprocess
import sys


def test_demo_runs_and_proves_the_review_survives():
    out = subprocess.run([sys.executable, "-m", "stet", "demo"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Same review state after the crash: yes" in out.stdout
    assert "Each accepted hunk in its file exactly once: yes" in out.stdout
    assert "exactly once: yes" in out.stdout.split("7.")[1]
    assert "DIFFERENT" not in out.stdout and "MISSING" not in out.stdout
    # What step 3 says it left pending is what the store holds (it once said 2 with 1 pending).
    import re

    left = int(re.search(r"left (\d+) pending", out.stdout).group(1))
    assert left == int(re.search(r"'pending': (\d+)", out.stdout).group(1))
