//! `pisces stats`: every response counted once, checked against a reference that decodes
//! every line of every file, against hand counts on the corpora's fork families, and
//! against ccusage 20.0.24's own output on the same files (tools/ccusage/).

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::Path;

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{check, pisces, stdout_json, testdata, TestResult};
use crate::store::{at_home, home, walk};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("stats::totals_equal_a_decode_everything_count", totals_equal_reference),
        Trial::test("stats::groups_add_up_to_the_total", groups_add_up),
        Trial::test("stats::agent_filter_reads_only_that_agents_sessions", agent_filter),
        Trial::test("stats::claude_fork_session_counted_once", claude_fork_family),
        Trial::test("stats::codex_fork_family_by_branch", codex_fork_family),
        Trial::test("stats::pi_fork_family_counted_once", pi_fork_family),
        Trial::test("stats::same_totals_as_ccusage_where_it_counts_right", same_as_ccusage),
        Trial::test("stats::csv_and_text", csv_and_text),
        Trial::test("stats::the_cache_never_gives_a_wrong_answer", cache_torture),
    ]
}

fn stats(args: &[&str]) -> Result<Value, libtest_mimic::Failed> {
    let mut all = vec!["stats", "--format", "json"];
    all.extend(args);
    stdout_json(&at_home().args(&all).output()?)
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn lines(p: &Path) -> Vec<Value> {
    fs::read_to_string(p).unwrap().lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// Distinct responses and their tokens, by decoding every line: pi's model calls by
/// (id, timestamp), Claude Code's replies by (message id, request id), each Codex
/// `token_usage_record` once (a fork copies no lines).
fn reference(h: &Path) -> (usize, f64) {
    let mut seen: HashMap<String, f64> = HashMap::new();
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    for dir in fs::read_dir(h.join(".pi/agent/sessions")).unwrap() {
        for f in fs::read_dir(dir.unwrap().path()).unwrap() {
            let f = f.unwrap().path();
            if !f.is_file() || f.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            for o in lines(&f) {
                // Model calls of pi's own are counted too: compactions, branch summaries
                // and cache-warming `usage` entries (pi's getUsageCostBreakdown).
                let reply =
                    o["type"] == "message" && matches!(o["message"]["role"].as_str(), Some("assistant" | "toolResult"));
                let own = matches!(o["type"].as_str(), Some("usage" | "compaction" | "branch_summary"));
                let u = if reply { &o["message"]["usage"] } else { &o["usage"] };
                if (reply || own) && u.is_object() {
                    let tokens = n(u, "input") + n(u, "output") + n(u, "cacheRead") + n(u, "cacheWrite");
                    seen.entry(format!("pi {} {}", o["id"], o["timestamp"])).or_insert(tokens);
                }
            }
        }
    }
    for f in fs::read_dir(h.join(".claude/projects/-home-dev-todo-cli")).unwrap() {
        let f = f.unwrap().path();
        if f.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        for o in lines(&f) {
            let u = &o["message"]["usage"];
            if o["type"] == "assistant" && u.is_object() {
                let tokens = n(u, "input_tokens")
                    + n(u, "output_tokens")
                    + n(u, "cache_read_input_tokens")
                    + n(u, "cache_creation_input_tokens");
                seen.entry(format!("claude {}:{}", o["message"]["id"], o["requestId"])).or_insert(tokens);
            }
        }
    }
    for f in walk(&h.join(".codex/sessions")) {
        for (k, o) in lines(&f).iter().enumerate() {
            if o["type"] == "token_usage_record" {
                let u = &o["payload"]["usage"];
                let tokens = n(u, "input_tokens") + n(u, "output_tokens") + n(u, "cache_write_input_tokens");
                seen.insert(format!("codex {} {k}", f.display()), tokens);
            }
        }
    }
    (seen.len(), seen.values().sum())
}

fn totals_equal_reference() -> TestResult {
    let doc = stats(&["--all", "--agent", "pi,claude,codex"])?;
    let (responses, tokens) = reference(home().dir.path());
    let total = &doc["total"];
    check(total["responses"].as_u64() == Some(responses as u64), || {
        format!("pisces counts {} responses, decoding every line finds {responses}", total["responses"])
    })?;
    check(num(&total["usage"]["tokens"]) == tokens, || {
        format!("pisces counts {} tokens, decoding every line finds {tokens}", total["usage"]["tokens"])
    })?;
    check(doc["copies"].as_u64().unwrap_or(0) > 0, || "the corpora's forks hold copies; none seen".into())
}

fn groups_add_up() -> TestResult {
    let all = stats(&["--all"])?;
    let total = num(&all["total"]["usage"]["tokens"]);
    check(total > 0.0, || "no tokens".into())?;
    for by in ["day", "week", "month", "agent", "model", "project", "session"] {
        let doc = stats(&["--all", "--by", by])?;
        let rows = doc["rows"].as_array().unwrap();
        let sum: f64 = rows.iter().map(|r| num(&r["usage"]["tokens"])).sum();
        let n: u64 = rows.iter().map(|r| r["responses"].as_u64().unwrap()).sum();
        check(sum == total && Some(n) == all["total"]["responses"].as_u64(), || {
            format!("--by {by}: rows sum to {sum} tokens in {n} responses, the total is {total}")
        })?;
        let keys: Vec<&str> = rows.iter().map(|r| r["key"].as_str().unwrap()).collect();
        let mut unique = keys.clone();
        unique.sort();
        unique.dedup();
        check(unique.len() == keys.len(), || format!("--by {by}: a group twice: {keys:?}"))?;
    }
    // Every agent of the home is a row of --by agent.
    let agents = stats(&["--all", "--by", "agent"])?;
    let names: Vec<&str> = agents["rows"].as_array().unwrap().iter().map(|r| r["key"].as_str().unwrap()).collect();
    for a in ["pi", "Claude Code", "Codex CLI", "oh-my-pi"] {
        check(names.contains(&a), || format!("--by agent: no {a} in {names:?}"))?;
    }
    // --since and --until split the responses at a time without losing or adding one.
    let days = stats(&["--all", "--by", "day"])?;
    let rows = days["rows"].as_array().unwrap();
    check(rows.len() >= 2, || format!("the corpora span one day: {rows:?}"))?;
    let cut = rows[rows.len() / 2]["key"].as_str().unwrap();
    let before = stats(&["--all", "--until", cut])?;
    let after = stats(&["--all", "--since", cut])?;
    let split = num(&before["total"]["usage"]["tokens"]) + num(&after["total"]["usage"]["tokens"]);
    check(split == total && num(&before["total"]["usage"]["tokens"]) > 0.0, || {
        format!("before {cut} + after = {split}, the total {total}")
    })?;
    // --model keeps the responses of the models that match.
    let models = stats(&["--all", "--by", "model"])?;
    let first = &models["rows"][0];
    let only = stats(&["--all", "--model", first["key"].as_str().unwrap()])?;
    check(num(&only["total"]["usage"]["tokens"]) >= num(&first["usage"]["tokens"]), || {
        format!(
            "--model {}: {} tokens, its row {}",
            first["key"], only["total"]["usage"]["tokens"], first["usage"]["tokens"]
        )
    })
}

/// `--agent X` gives `--by agent`'s row for X, and does not read the other agents'
/// sessions: a broken pi file next to Claude Code's is not reported then.
fn agent_filter() -> TestResult {
    let agents = stats(&["--all", "--by", "agent", "--no-cache"])?;
    let rows = agents["rows"].as_array().cloned().unwrap_or_default();
    check(rows.len() >= 4, || format!("{rows:?}"))?;
    for row in &rows {
        let key = row["key"].as_str().unwrap_or_default();
        let one = stats(&["--all", "--agent", key, "--no-cache"])?;
        check(one["total"]["usage"] == row["usage"] && one["total"]["responses"] == row["responses"], || {
            format!("--agent {key}: {} ; its row: {row}", one["total"])
        })?;
    }
    // From the cache: the same totals, and only that agent's sessions answered for (the
    // others, held as they are, are left out unread).
    let cache = tempfile::tempdir()?;
    let cached = |extra: &[&str]| -> Result<Value, libtest_mimic::Failed> {
        let mut all = vec!["stats", "--all", "--format", "json"];
        all.extend(extra);
        stdout_json(&at_home().env("XDG_CACHE_HOME", cache.path()).args(&all).output()?)
    };
    cached(&[])?;
    let every = cached(&[])?;
    check(every["cached"] == every["sessions"] && every["sessions"].as_u64() > Some(4), || format!("{every}"))?;
    for row in &rows {
        let key = row["key"].as_str().unwrap_or_default();
        let one = cached(&["--agent", key])?;
        let fine = one["total"]["usage"] == row["usage"]
            && one["total"]["responses"] == row["responses"]
            && one["cached"] == one["sessions"]
            && one["sessions"].as_u64() < every["sessions"].as_u64();
        check(fine, || format!("--agent {key} from the cache: {one} ; its row: {row}"))?;
    }
    let home = tempfile::tempdir()?;
    let claude = home.path().join(".claude/projects/-w");
    let pi = home.path().join(".pi/agent/sessions/--w--");
    std::fs::create_dir_all(&claude)?;
    std::fs::create_dir_all(&pi)?;
    let src = walk(&testdata().join("claude-code-2.1.332"))
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .ok_or("no Claude Code file")?;
    std::fs::copy(&src, claude.join(src.file_name().unwrap()))?;
    // A pi session's line without its header: pi refuses the file.
    std::fs::write(
        pi.join("2026-12-01T10-00-00-000Z_broken.jsonl"),
        "{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-12-01T10:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    )?;
    // (A session that cannot be read makes the exit status 2, after the report.)
    let run = |extra: &[&str]| -> Result<Value, libtest_mimic::Failed> {
        let mut c = pisces();
        c.env("HOME", home.path()).env("OPENCLAW_STATE_DIR", home.path().join("none"));
        c.args(["stats", "--all", "--no-cache", "--format", "json"]).args(extra);
        Ok(serde_json::from_slice(&c.output()?.stdout)?)
    };
    let every = run(&[])?;
    let only = run(&["--agent", "claude"])?;
    let failed = |d: &Value| d["failed"].as_array().map_or(0, Vec::len);
    check(failed(&every) == 1 && failed(&only) == 0 && only["total"] == every["total"], || {
        format!("every agent: {every}\n--agent claude: {only}")
    })
}

fn rows_by<'a>(doc: &'a Value, field: &str) -> BTreeMap<String, &'a Value> {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let k = r[field].as_str().unwrap();
            let k = Path::new(k).file_name().map_or(k.to_string(), |f| f.to_string_lossy().into_owned());
            (k, r)
        })
        .collect()
}

fn responses(r: &Value) -> u64 {
    r["responses"].as_u64().unwrap()
}

fn added(r: &Value) -> u64 {
    r["added"]["responses"].as_u64().unwrap()
}

/// 07-fork-copy.jsonl is `--fork-session` of 07-fork-source.jsonl after its second reply
/// (testdata/claude-code-2.1.332/MANIFEST.md): the two first replies are in both files, and
/// the source's, which the copy's `requestSessionId` names.
fn claude_fork_family() -> TestResult {
    let dir = testdata().join("claude-code-2.1.332");
    let files = [dir.join("07-fork-source.jsonl"), dir.join("07-fork-copy.jsonl")];
    let run = |by: &str| {
        let mut c = pisces();
        c.args(["stats", "--format", "json", "--by", by]).args(&files);
        stdout_json(&c.output()?)
    };
    let doc = run("session")?;
    let rows = rows_by(&doc, "session");
    check(responses(rows["07-fork-source.jsonl"]) == 3 && responses(rows["07-fork-copy.jsonl"]) == 3, || {
        format!("source and copy should own 3 replies each: {doc}")
    })?;
    check(doc["total"]["responses"] == 6 && doc["copies"] == 2, || format!("6 replies, 2 copies: {doc}"))?;
    let doc = run("branch")?;
    let tips = rows_by(&doc, "key");
    // The copy's tip sees the 2 shared replies and its 3; the source's its 2 and 1 more.
    let copy = tips["1600f127-3d8c-48e6-b68c-1b623dc2b483"];
    let source = tips["9eae115f-4db8-4f46-a174-f4198e76716a"];
    check(responses(copy) == 5 && added(copy) == 3, || format!("the fork's tip: {copy}"))?;
    check(responses(source) == 3 && added(source) == 1, || format!("the source's tip: {source}"))
}

/// testdata/codex-0.171.0/03-forks: A (4 replies: `ls` and its answer, two more prompts),
/// forks B and C of A after its third reply, D of B after B's first.
fn codex_fork_family() -> TestResult {
    let empty = tempfile::tempdir()?;
    let mut c = pisces();
    c.env("CODEX_HOME", testdata().join("codex-0.171.0/03-forks")).env("HOME", empty.path());
    let doc = stdout_json(&c.args(["stats", "--all", "--by", "branch", "--format", "json"]).output()?)?;
    let tips = rows_by(&doc, "key");
    let want =
        [("9cac33b1d38d:38", 4, 1), ("072563e0f647:50", 5, 1), ("14978137450f:45", 5, 2), ("0a741152d77c:52", 5, 1)];
    check(tips.len() == want.len(), || format!("tips: {:?}", tips.keys()))?;
    for (tip, path, own) in want {
        let r = tips.get(tip).ok_or_else(|| format!("no tip {tip}: {:?}", tips.keys()))?;
        check(responses(r) == path && added(r) == own, || format!("{tip}: want {path} on its path, {own} added: {r}"))?;
    }
    check(doc["total"]["responses"] == 9, || format!("9 replies in all: {}", doc["total"]))
}

/// testdata/pi-1.6.0: 13 is a /fork, 14 a /clone and 15 a --fork of 12, each a verbatim
/// copy of entries under the same ids.
fn pi_fork_family() -> TestResult {
    let dir = testdata().join("pi-1.6.0");
    let names = ["12-fork-source.jsonl", "13-fork-child.jsonl", "14-clone.jsonl", "15-fork-cli.jsonl"];
    let mut c = pisces();
    c.args(["stats", "--format", "json", "--by", "session"]).args(names.iter().map(|n| dir.join(n)));
    let doc = stdout_json(&c.output()?)?;
    let rows = rows_by(&doc, "session");
    // The source holds 6 replies; each copy adds what it asked after the copy.
    let want =
        [("12-fork-source.jsonl", 6), ("13-fork-child.jsonl", 2), ("14-clone.jsonl", 1), ("15-fork-cli.jsonl", 2)];
    for (name, n) in want {
        check(responses(rows[name]) == n, || format!("{name}: want {n} replies: {}", rows[name]))?;
    }
    // Alone, each file's replies are all its own.
    let mut alone = pisces();
    alone.args(["stats", "--format", "json"]).arg(dir.join("13-fork-child.jsonl"));
    let alone = stdout_json(&alone.output()?)?;
    check(alone["total"]["responses"] == 5 && alone["copies"] == 0, || format!("13 alone: {alone}"))
}

/// ccusage's JSON on the same corpora, as tools/ccusage/run.sh wrote it: the totals agree
/// where ccusage counts once (Claude Code: it dedupes by message and request id; a pi
/// source session and a Codex rollout with no forks), and differ as README.md says where
/// it does not (pi copies counted again, two Codex forks missed).
fn same_as_ccusage() -> TestResult {
    let golden = |name: &str| -> Value {
        serde_json::from_str(&fs::read_to_string(testdata().join("ccusage-20.0.24").join(name)).unwrap()).unwrap()
    };
    let tokens = |v: &Value| num(&v["total"]["usage"]["tokens"]);
    // Claude Code: the whole corpus.
    let claude = golden("claude-code-2.1.332.json");
    let dir = testdata().join("claude-code-2.1.332");
    let mut c = pisces();
    let files: Vec<_> = fs::read_dir(&dir)?
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    c.args(["stats", "--format", "json"]).args(&files);
    let ours = stdout_json(&c.output()?)?;
    check(tokens(&ours) == num(&claude["totals"]["totalTokens"]), || {
        format!("Claude Code: pisces {} tokens, ccusage {}", tokens(&ours), claude["totals"]["totalTokens"])
    })?;
    // pi: the source session alone is the same; the family is 2 times as much in ccusage.
    let pi = golden("pi-fork-family.json");
    let by_id: BTreeMap<&str, &Value> =
        pi["sessions"].as_array().unwrap().iter().map(|s| (s["sessionId"].as_str().unwrap(), s)).collect();
    let mut c = pisces();
    c.args(["stats", "--format", "json", "--by", "session"]);
    c.args(
        ["12-fork-source", "13-fork-child", "14-clone", "15-fork-cli"]
            .map(|n| testdata().join(format!("pi-1.6.0/{n}.jsonl"))),
    );
    let family = stdout_json(&c.output()?)?;
    let rows = rows_by(&family, "session");
    let source = rows["12-fork-source.jsonl"];
    check(num(&source["usage"]["tokens"]) == num(&by_id["12-fork-source"]["totalTokens"]), || {
        format!("pi source: pisces {}, ccusage {}", source["usage"]["tokens"], by_id["12-fork-source"]["totalTokens"])
    })?;
    let theirs = num(&pi["totals"]["totalTokens"]);
    check(theirs > 1.9 * tokens(&family), || format!("pi family: ccusage {theirs}, pisces {}", tokens(&family)))?;
    // Codex: a rollout without forks is the same; in the fork family ccusage misses two forks.
    let empty = tempfile::tempdir()?;
    for (name, corpus) in [("codex-01-exec-and-patch.json", "01-exec-and-patch"), ("codex-03-forks.json", "03-forks")] {
        let g = golden(name);
        let mut c = pisces();
        c.env("CODEX_HOME", testdata().join("codex-0.171.0").join(corpus)).env("HOME", empty.path());
        let ours = stdout_json(&c.args(["stats", "--all", "--format", "json"]).output()?)?;
        let theirs = num(&g["totals"]["totalTokens"]);
        let same = tokens(&ours) == theirs;
        check(same == (corpus == "01-exec-and-patch"), || {
            format!("{corpus}: pisces {}, ccusage {theirs}", tokens(&ours))
        })?;
    }
    Ok(())
}

fn csv_and_text() -> TestResult {
    let out = at_home().args(["stats", "--all", "--by", "agent", "--format", "csv"]).output()?;
    let text = String::from_utf8(out.stdout)?;
    let mut lines = text.lines();
    check(lines.next().is_some_and(|h| h.starts_with("agent,responses,input,")), || format!("header: {text}"))?;
    check(lines.count() >= 4, || format!("rows: {text}"))?;
    let out = at_home().args(["stats", "--all", "--by", "model"]).output()?;
    let table = String::from_utf8(out.stdout)?;
    let footer = String::from_utf8(out.stderr)?;
    check(table.lines().last().is_some_and(|l| l.starts_with("Total")), || format!("no total row: {table}"))?;
    check(footer.contains("each counted once") && footer.contains("not counted again"), || footer.clone())
}

/// A store and a cache of its own, to change under the cache's feet.
struct Store {
    home: tempfile::TempDir,
    cache: tempfile::TempDir,
}

impl Store {
    fn pi(&self) -> std::path::PathBuf {
        self.home.path().join(".pi/agent/sessions/--home-dev-todo-cli--")
    }

    fn codex(&self) -> std::path::PathBuf {
        self.home.path().join(".codex/sessions/2026/12/02")
    }

    fn run(&self, args: &[&str], cached: bool) -> Result<Value, libtest_mimic::Failed> {
        let mut c = pisces();
        c.env("HOME", self.home.path()).env("XDG_CACHE_HOME", self.cache.path());
        if !cached {
            c.arg("--no-cache");
        }
        let mut doc = stdout_json(&c.args(args).output()?)?;
        if let Some(o) = doc.as_object_mut() {
            o.remove("cached");
            o.remove("extended");
        }
        Ok(doc)
    }

    /// Every whole-store answer with the cache is the answer without it.
    fn same(&self, when: &str) -> TestResult {
        for args in [
            &["ls", "--all", "--format", "json"][..],
            &["stats", "--all", "--by", "session", "--format", "json"],
            &["stats", "--all", "--by", "branch", "--format", "json"],
        ] {
            let (with, without) = (self.run(args, true)?, self.run(args, false)?);
            check(with == without, || {
                format!("{when}: `{}` with the cache:\n{with}\nwithout:\n{without}", args.join(" "))
            })?;
        }
        Ok(())
    }

    fn cached(&self) -> Result<u64, libtest_mimic::Failed> {
        Ok(self.counts()?.0)
    }

    /// How many sessions a run of `stats` took from the cache, and how many that grew it
    /// counted from what the cache held and their new entries.
    fn counts(&self) -> Result<(u64, u64), libtest_mimic::Failed> {
        let mut c = pisces();
        c.env("HOME", self.home.path()).env("XDG_CACHE_HOME", self.cache.path());
        let doc = stdout_json(&c.args(["stats", "--all", "--format", "json"]).output()?)?;
        Ok((doc["cached"].as_u64().unwrap_or(0), doc["extended"].as_u64().unwrap_or(0)))
    }
}

fn cache_torture() -> TestResult {
    let store = Store { home: tempfile::tempdir()?, cache: tempfile::tempdir()? };
    fs::create_dir_all(store.pi())?;
    for n in ["01-linear-chat", "02-tool-use", "12-fork-source", "13-fork-child"] {
        fs::copy(testdata().join(format!("pi-1.6.0/{n}.jsonl")), store.pi().join(format!("{n}.jsonl")))?;
    }
    let claude = store.home.path().join(".claude/projects/-home-dev-todo-cli");
    fs::create_dir_all(&claude)?;
    for n in ["07-fork-source", "07-fork-copy"] {
        fs::copy(testdata().join(format!("claude-code-2.1.332/{n}.jsonl")), claude.join(format!("{n}.jsonl")))?;
    }
    // Codex's family without fork D, which comes later.
    let codex_src = testdata().join("codex-0.171.0/03-forks/sessions/2026/12/02");
    fs::create_dir_all(store.codex())?;
    let fork_d = "rollout-2026-12-02T22-54-33-01a238f7-7f30-7b42-a1dc-0a741152d77c.jsonl";
    for e in fs::read_dir(&codex_src)? {
        let e = e?;
        if e.file_name() != fork_d {
            fs::copy(e.path(), store.codex().join(e.file_name()))?;
        }
    }
    store.same("a cold cache")?;
    let n = store.cached()?;
    check(n == 9, || format!("a warm run takes 9 sessions from the cache, not {n}"))?;
    let dir = store.cache.path().join("pisces");
    let mode = std::os::unix::fs::PermissionsExt::mode(&fs::metadata(&dir)?.permissions()) & 0o777;
    check(mode == 0o700, || format!("the cache folder's mode is {mode:o}"))?;
    for f in fs::read_dir(&dir)? {
        let text = fs::read(f?.path())?;
        check(!text.windows(9).any(|w| w == b"Priorities"), || "the cache holds a reply's text".into())?;
    }
    let before = store.run(&["stats", "--all", "--format", "json"], true)?;

    // Appended: a reply more at the end of a pi session.
    let chat = store.pi().join("01-linear-chat.jsonl");
    let text = fs::read_to_string(&chat)?;
    let mut last: Value = serde_json::from_str(text.lines().last().unwrap())?;
    last["parentId"] = last["id"].clone();
    last["id"] = "feed0001".into();
    last["timestamp"] = "2026-11-29T19:20:00.000Z".into();
    last["message"]["usage"]["output"] = 1234.into();
    fs::write(&chat, format!("{text}{last}\n"))?;
    let (hits, grown) = store.counts()?;
    check((hits, grown) == (8, 1), || {
        format!("after an append, {hits} sessions from the cache and {grown} extended, want 8 and 1")
    })?;
    store.same("a session appended to")?;
    let after = store.run(&["stats", "--all", "--format", "json"], true)?;
    check(after["total"]["responses"].as_u64() == before["total"]["responses"].as_u64().map(|n| n + 1), || {
        format!("the appended reply is not counted: {} then {}", before["total"], after["total"])
    })?;

    // Rewritten in place, the same size and the same modification time: its header's cwd.
    let source = store.pi().join("12-fork-source.jsonl");
    let text = fs::read_to_string(&source)?;
    let stamp = tempfile::NamedTempFile::new()?;
    std::process::Command::new("touch").arg("-r").arg(&source).arg(stamp.path()).status()?;
    fs::write(&source, text.replacen("todo-cli", "todo-clj", 1))?;
    std::process::Command::new("touch").arg("-r").arg(stamp.path()).arg(&source).status()?;
    store.same("a session rewritten in place")?;

    // Truncated to its first lines.
    let tools = store.pi().join("02-tool-use.jsonl");
    let text = fs::read_to_string(&tools)?;
    let kept: Vec<&str> = text.lines().take(5).collect();
    fs::write(&tools, format!("{}\n", kept.join("\n")))?;
    store.same("a session truncated")?;

    // Replaced by another file of the same size (a rename over it), one reply's tokens
    // changed in its middle.
    let child = store.pi().join("13-fork-child.jsonl");
    let text = fs::read_to_string(&child)?;
    let at = text.len() / 2 + text[text.len() / 2..].find("\"output\":").unwrap() + 9;
    let digit = text.as_bytes()[at];
    let mut changed = text.into_bytes();
    changed[at] = if digit == b'9' { b'8' } else { digit + 1 };
    let other = store.pi().join("other.tmp");
    fs::write(&other, &changed)?;
    fs::rename(&other, &child)?;
    store.same("a session replaced by another of its size")?;

    // Replaced by a look-alike under the same name (pi's `--mode json` stream): skipped,
    // though the cache held a session there (discovery trusts only a file it holds as it
    // was).
    let header = r#"{"type":"session","version":3,"id":"0f3c2a1e-1111-4222-8333-944455556666","timestamp":"2026-11-30T10:00:00.000Z","cwd":"/home/dev/app"}"#;
    let session = fs::read(&chat)?;
    fs::write(&chat, format!("{header}\n{{\"type\":\"agent_start\"}}\n{{\"type\":\"turn_start\"}}\n"))?;
    store.same("a session replaced by an event log")?;
    let ls = store.run(&["ls", "--all", "--format", "json"], true)?;
    let skipped = |s: &Value| s["path"].as_str().is_some_and(|p| p.ends_with("01-linear-chat.jsonl"));
    check(ls["skipped"].as_array().is_some_and(|s| s.iter().any(skipped)), || {
        format!("the event log is not among the skipped: {}", ls["skipped"])
    })?;
    fs::write(&chat, session)?;
    store.same("the session back")?;

    // A new Codex fork: its parent's tree (and its branches) grow.
    fs::copy(codex_src.join(fork_d), store.codex().join(fork_d))?;
    store.same("a new fork")?;

    // The cache damaged: a byte flipped, cut short, a foreign file.
    for damage in 0..3 {
        for f in fs::read_dir(&dir)? {
            let p = f?.path();
            let mut b = fs::read(&p)?;
            match damage {
                0 => {
                    let k = b.len() / 2;
                    b[k] ^= 0x20;
                }
                1 => b.truncate(b.len() / 3),
                _ => b = b"{\"not\": \"a pisces cache\"}".to_vec(),
            }
            fs::write(&p, b)?;
        }
        store.same(&format!("a damaged cache ({damage})"))?;
    }

    // Two processes at once, from an empty cache: both right, and the cache after them too.
    fs::remove_dir_all(&dir)?;
    let want = store.run(&["stats", "--all", "--by", "session", "--format", "json"], false)?;
    let spawn = || {
        let mut c = pisces();
        c.env("HOME", store.home.path()).env("XDG_CACHE_HOME", store.cache.path());
        c.args(["stats", "--all", "--by", "session", "--format", "json"]);
        c.stdout(std::process::Stdio::piped()).spawn()
    };
    let (a, b) = (spawn()?, spawn()?);
    for child in [a, b] {
        let out = child.wait_with_output()?;
        let mut got: Value = serde_json::from_slice(&out.stdout)?;
        if let Some(o) = got.as_object_mut() {
            o.remove("cached");
            o.remove("extended");
        }
        check(got == want, || format!("a process running beside another: {got}"))?;
    }
    let n = store.cached()?;
    check(n == 10, || format!("after two processes, the cache holds {n} of 10 sessions"))?;
    store.same("after two processes")
}
