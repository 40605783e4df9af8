"""Goldens for `pisces convert --to pi` of Codex rollouts: what the real pi makes of each
conversion (the same as tools/claude-oracle/pi_goldens.py, whose code it uses).

usage: python3 tools/codex-oracle/pi_goldens.py   (build target/debug/pisces first)

Converts every thread of every family at its end and writes what pi 1.6.0 would send its model
(`llm`) to testdata/codex-0.171.0/converted/<family>--<thread id>.json.
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "claude-oracle"))
import pi_goldens  # noqa: E402

OUT = HERE.parent.parent / "testdata" / "codex-0.171.0"

if __name__ == "__main__":
    files = sorted(OUT.glob("*/sessions/**/rollout-*.jsonl"))
    pi_goldens.convert(files, OUT / "converted", lambda f: f"{f.relative_to(OUT).parts[0]}--{f.stem[-36:]}")
