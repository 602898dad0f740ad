"""Run one ``<!-- example:NAME -->`` Python block of README.md as written (``python scripts/readme_example.py NAME``)."""

from __future__ import annotations

import re
import sys
from pathlib import Path


def example(name: str) -> str:
    """The code of README's ``example:NAME`` block."""
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    m = re.search(rf"<!-- example:{re.escape(name)} -->\n```python\n(.*?)```", text, re.S)
    if m is None:
        raise SystemExit(f"README.md has no example:{name} block")
    return m.group(1)


if __name__ == "__main__":
    code = example(sys.argv[1] if len(sys.argv) > 1 else "reinforce")
    exec(compile(code, f"README.md:example:{sys.argv[1:2]}", "exec"), {"__name__": "__main__"})
