"""Goldens for `pisces convert --to pi`: what the real pi makes of each conversion.

usage: python3 tools/claude-oracle/pi_goldens.py [FILE.jsonl ...]   (default: the whole corpus)

Converts each corpus file at the client's own leaf with pisces (target/debug/pisces, build it
first), opens the result with the real pi (../shared/pi-oracle/context.mjs, installed by its
install.sh) and writes what pi would send its model (`llm`) and its path to
testdata/claude-code-2.1.332/converted/<stem>.json. tests/cli/claude.rs converts again and
compares.
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "testdata" / "claude-code-2.1.332"
ORACLE = REPO.parent / "shared" / "pi-oracle" / "context.mjs"
PISCES = REPO / "target" / "debug" / "pisces"


def main(names):
    files = [Path(n).resolve() for n in names] or sorted(OUT.glob("*.jsonl"))
    convert(files, OUT / "converted", lambda f: f.stem)


def convert(files, out_dir, name_of):
    """Each of `files` converted at its leaf, as pi reads it, into `out_dir/<name_of(f)>.json`
    (tools/codex-oracle/pi_goldens.py uses it too)."""
    out_dir.mkdir(exist_ok=True)
    for f in files:
        with tempfile.TemporaryDirectory() as tmp:
            conv = Path(tmp) / "converted.jsonl"
            subprocess.run([str(PISCES), "convert", str(f), "--to", "pi", "-o", str(conv)], check=True,
                           stdout=subprocess.DEVNULL)
            ctx = json.loads(subprocess.run(["node", str(ORACLE), str(conv)], check=True, capture_output=True,
                                            text=True).stdout)
        doc = {"pi": ctx["pi"], "leafId": ctx["leafId"], "pathIds": ctx["pathIds"], "llm": ctx["llm"]}
        out = out_dir / f"{name_of(f)}.json"
        out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        print(f"pi-goldens: {out.relative_to(REPO)}")


if __name__ == "__main__":
    main(sys.argv[1:])
