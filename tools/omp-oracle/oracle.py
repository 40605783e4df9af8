#!/usr/bin/env python3
"""omp-oracle: oh-my-pi 18.2.3 (omp) as the oracle for its session files.

  python3 tools/omp-oracle/oracle.py install   # omp 18.2.3 + Bun into ~/.cache/pisces-clients/omp (~1.5 GB)
  python3 tools/omp-oracle/oracle.py corpus    # scenarios/*.ts -> testdata/omp-18.2.3/home/.omp/agent/...
  python3 tools/omp-oracle/oracle.py goldens   # dump.ts on every file -> testdata/omp-18.2.3/goldens/NAME.json
  python3 tools/omp-oracle/oracle.py all       # corpus, then goldens
  python3 tools/omp-oracle/oracle.py corpus SCENARIO...   # only those scenarios again; the rest is kept
  python3 tools/omp-oracle/oracle.py goldens NAME...      # only those files' goldens

Every scenario runs omp's own SDK with omp's mock provider, with HOME=/home/dev, cwd
/home/dev/projects/<scenario>, an empty environment and no network (`unshare -n`, so any
connection attempt fails at once). Needs root (unshare). Never in CI: the tests read the
committed files.
"""
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parent
REPO = TOOL.parent.parent
OUT = REPO / "testdata" / "omp-18.2.3"
CLIENTS = Path(os.environ.get("CLIENTS_HOME", Path.home() / ".cache" / "pisces-clients"))
INSTALL = CLIENTS / "omp" / "node_modules"
BUN = INSTALL / "@oven" / "bun-linux-x64" / "bin" / "bun"
SCRATCH = CLIENTS / "omp-oracle"
HOME = Path("/home/dev")  # neutral path: what the files say
AGENT_DIRS = ["sessions", "blobs", "archive"]  # what is kept of ~/.omp/agent
FORBIDDEN = re.compile(rb"(?<![\w.\-/~])/(?:root|work|tmp)\b")  # an absolute path of this machine
# A JSON record larger than this is kept zstd-compressed (NAME.json.zst, `zstd -19 --long`):
# a context repeats the conversation before it, so a long session's goldens grow with its
# square, and a snapcompact one repeats its frames' base64 in every context after it.
COMPRESS_OVER = 1 << 20


def sh(cmd, **kw):
    print("+", " ".join(map(str, cmd)), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def install():
    sh(["bash", str(TOOL / "install.sh")], env={**os.environ, "CLIENTS_HOME": str(CLIENTS)})


def need_install():
    if not BUN.exists():
        sys.exit(f"omp is not installed ({BUN} missing): run `{sys.argv[0]} install`")
    link = TOOL / "node_modules"
    if not link.is_symlink() or link.resolve() != INSTALL.resolve():
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(INSTALL)


def bun(script, cwd, home, args=(), log=None):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", "TZ": "UTC"}
    cmd = ["unshare", "-n", str(BUN), str(script), *map(str, args)]
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True)
    if log:
        log.write_bytes(r.stdout + b"\n--- stderr ---\n" + r.stderr)
    if r.returncode != 0:
        sys.stderr.write(r.stderr.decode(errors="replace")[-4000:])
        raise SystemExit(f"{script} failed ({r.returncode})")
    return r.stdout.decode()


def scenarios(names):
    all_ = sorted(p.stem for p in (TOOL / "scenarios").glob("*.ts"))
    return [n for n in all_ if not names or n in names]


def check_paths(root):
    bad = []
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        data = p.read_bytes()
        if p.suffix == ".gz":
            data = gzip.decompress(data)
        elif p.suffix == ".zst":
            data = read_record(p.with_suffix("")).encode()
        for m in FORBIDDEN.finditer(data):
            bad.append(f"{p.relative_to(REPO)}: ...{data[max(0, m.start() - 60):m.end() + 40]!r}...")
            break
    if bad:
        print("\n".join(bad))
        raise SystemExit("machine paths found in the corpus (see above)")


def corpus(names):
    """Runs the scenarios (all, or those named) and copies what they wrote into OUT. Named
    scenarios replace only their own files (their buckets): the rest of the corpus, and the
    goldens made of it, stay as they are."""
    need_install()
    SCRATCH.mkdir(parents=True, exist_ok=True)
    (SCRATCH / "logs").mkdir(exist_ok=True)
    # a fresh neutral home: only what the scenarios write
    for d in (HOME / ".omp", HOME / "projects"):
        shutil.rmtree(d, ignore_errors=True)
    HOME.mkdir(parents=True, exist_ok=True)
    files = {}
    ran = scenarios(names)
    for sc in ran:
        cwd = HOME / "projects" / sc
        cwd.mkdir(parents=True, exist_ok=True)
        out = bun(TOOL / "scenarios" / f"{sc}.ts", cwd, HOME, log=SCRATCH / "logs" / f"{sc}.log")
        for line in out.splitlines():
            if line.startswith("SESSION_FILE "):
                _, name, path = line.split(" ", 2)
                files[name] = path
        print(f"{sc}: ok", flush=True)
    agent = HOME / ".omp" / "agent"
    dest = OUT / "home" / ".omp" / "agent"
    kept = {}
    if names:
        buckets = [f"/-projects-{sc}-work" for sc in ran]
        old = json.loads((OUT / "files.json").read_text())
        kept = {n: r for n, r in old.items() if not any(b + "/" in r for b in buckets)}
        for d in ("sessions", "archive/sessions"):
            for sc in ran:
                shutil.rmtree(dest / d / f"-projects-{sc}-work", ignore_errors=True)
    else:
        shutil.rmtree(OUT / "home", ignore_errors=True)
    dest.mkdir(parents=True, exist_ok=True)
    for d in AGENT_DIRS:
        if (agent / d).exists():
            shutil.copytree(agent / d, dest / d, ignore=shutil.ignore_patterns(".*.lock", "*.tmp"),
                            dirs_exist_ok=True)
    # names -> paths relative to OUT; subagent transcripts <session>/<agentId>.jsonl get
    # "<parent name>.<agentId>"
    rel = {n: str(Path("home") / Path(p).relative_to(HOME)) for n, p in files.items()}
    known = set(rel.values()) | set(kept.values())
    for p in sorted((OUT / "home").rglob("*.jsonl*")):
        r = str(p.relative_to(OUT))
        if r in known or not (r.endswith(".jsonl") or r.endswith(".jsonl.gz")):
            continue
        parent = next((n for n, f in rel.items() if r.startswith(f[: -len(".jsonl")] + "/")), None)
        if parent is None:
            raise SystemExit(f"unannounced session file {r}")
        rel[f"{parent}.{p.name.split('.')[0]}"] = r
    rel.update(kept)
    missing = [r for r in rel.values() if not (OUT / r).exists()]
    if missing:
        raise SystemExit(f"announced files not written: {missing}")
    drop_unused_blobs(dest / "blobs")
    (OUT / "files.json").write_text(json.dumps(dict(sorted(rel.items())), indent=1) + "\n")
    check_paths(OUT / "home")
    print(f"corpus: {len(rel)} session files")


def drop_unused_blobs(blobs):
    """Removes the blobs (and omp's `<hash>.<ext>` display copies) no corpus file refers to:
    those of an earlier run of a scenario that ran again."""
    if not blobs.is_dir():
        return
    used = set()
    for p in (OUT / "home").rglob("*.jsonl*"):
        data = p.read_bytes()
        if p.suffix == ".gz":
            data = gzip.decompress(data)
        used.update(m.decode() for m in re.findall(rb"blob:sha256:([0-9a-f]{64})", data))
    for b in blobs.iterdir():
        if b.name.split(".")[0] not in used:
            b.unlink()


def write_record(path, text):
    """Writes a golden (or fork record) as NAME.json, or as NAME.json.zst when it is large;
    the other of the two is removed."""
    plain, packed = Path(path), Path(str(path) + ".zst")
    for p in (plain, packed):
        p.unlink(missing_ok=True)
    if len(text.encode()) <= COMPRESS_OVER:
        plain.write_text(text)
        return
    subprocess.run(["zstd", "-q", "-19", "--long=24", "-o", str(packed)], input=text.encode(), check=True)


def read_record(path):
    """The text of a record written by write_record."""
    packed = Path(str(path) + ".zst")
    if packed.exists():
        return subprocess.run(["zstd", "-q", "-d", "--long=24", "-c", str(packed)], capture_output=True,
                              check=True).stdout.decode()
    return Path(path).read_text()


def digest(root):
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def goldens(names):
    need_install()
    files = json.loads((OUT / "files.json").read_text())
    before = digest(OUT / "home")
    scratch_home = SCRATCH / "goldens-home"
    (SCRATCH / "logs").mkdir(parents=True, exist_ok=True)
    shutil.rmtree(scratch_home, ignore_errors=True)
    shutil.copytree(OUT / "home", scratch_home)
    gdir = OUT / "goldens"
    if not names:
        shutil.rmtree(gdir, ignore_errors=True)
    gdir.mkdir(exist_ok=True)
    for name, rel in files.items():
        if names and name not in names:
            continue
        f = scratch_home / Path(rel).relative_to("home")
        golden = gdir / f"{name}.json"
        dumped = SCRATCH / "dump.json"
        bun(TOOL / "dump.ts", scratch_home, scratch_home, [f, "--rel", rel, "--out", dumped],
            log=SCRATCH / "logs" / f"dump-{name}.log")
        out = dumped.read_text()
        json.loads(out)  # well-formed
        write_record(golden, out)
        print(f"golden {name}: {len(out)} bytes", flush=True)
    if digest(OUT / "home") != before:
        raise SystemExit("the corpus changed while the goldens were made")
    check_paths(gdir)


def main():
    cmd, names = (sys.argv[1] if len(sys.argv) > 1 else "all"), sys.argv[2:]
    if cmd == "install":
        install()
    elif cmd == "corpus":
        corpus(names)
    elif cmd == "goldens":
        goldens(names)
    elif cmd == "all":
        corpus(names)
        goldens([])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
