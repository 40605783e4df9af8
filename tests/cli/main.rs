//! Integration tests: the real `pisces` binary on the session files in testdata/.
//!
//! One binary (as jj and ripgrep do), with cases generated from testdata/ at run time:
//! every session file and every leaf pi computed a golden for is its own case.

mod agent_cmd;
mod agent_corpus;
mod agent_payload;
mod agent_summarize;
mod broken;
mod check_cmd;
mod claude;
mod codex;
mod common;
mod conformance;
mod defects;
mod diff_cmd;
mod export;
mod faults;
mod fork_cmd;
mod fuzzing;
mod hostile;
mod inputs;
mod kept;
mod label_cmd;
mod live_oracle;
mod lookalikes;
mod meta;
mod omp;
mod openclaw;
mod path_cmd;
mod properties;
mod repl_pty;
mod revs;
mod show_leaves;
mod snapshots;
mod stats;
mod store;
mod summarize_cmd;
mod tools_live;
mod tree_cmd;
mod verified;

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let mut trials = Vec::new();
    trials.extend(agent_cmd::trials());
    trials.extend(agent_corpus::trials());
    trials.extend(agent_corpus::parallel_trials());
    trials.extend(agent_corpus::tool_outcome_trials());
    trials.extend(agent_payload::trials());
    trials.extend(agent_summarize::trials());
    trials.extend(broken::trials());
    trials.extend(check_cmd::trials());
    trials.extend(claude::trials());
    trials.extend(codex::trials());
    trials.extend(conformance::trials());
    trials.extend(defects::trials());
    trials.extend(diff_cmd::trials());
    trials.extend(export::trials());
    trials.extend(faults::trials());
    trials.extend(kept::trials());
    trials.extend(fork_cmd::trials());
    trials.extend(fuzzing::trials());
    trials.extend(hostile::trials());
    trials.extend(inputs::trials());
    trials.extend(label_cmd::trials());
    trials.extend(live_oracle::trials());
    trials.extend(lookalikes::trials());
    trials.extend(meta::trials());
    trials.extend(omp::trials());
    trials.extend(openclaw::trials());
    trials.extend(path_cmd::trials());
    trials.extend(properties::trials());
    trials.extend(repl_pty::trials());
    trials.extend(revs::trials());
    trials.extend(show_leaves::trials());
    trials.extend(snapshots::trials());
    trials.extend(store::trials());
    trials.extend(stats::trials());
    trials.extend(summarize_cmd::trials());
    trials.extend(tools_live::trials());
    trials.extend(tree_cmd::trials());
    trials.extend(verified::trials());
    libtest_mimic::run(&args, trials).exit();
}
