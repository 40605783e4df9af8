//! Man pages generated from the clap definitions (committed in `man/`; a test fails when
//! they drift from the code: run `UPDATE_MAN=1 cargo test --lib man_pages` to refresh).

use clap::CommandFactory;

use super::Cli;

/// `(file name, roff)` for `pisces.1` and one page per subcommand (`pisces-path.1`, …).
pub fn pages() -> Vec<(String, Vec<u8>)> {
    let cmd = Cli::command().version(env!("CARGO_PKG_VERSION"));
    let mut pages = Vec::new();
    let mut render = |name: String, cmd: clap::Command| {
        let mut buf = Vec::new();
        clap_mangen::Man::new(cmd).title(name.to_uppercase()).render(&mut buf).expect("writing to a Vec");
        pages.push((format!("{name}.1"), buf));
    };
    render("pisces".into(), cmd.clone());
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("pisces-{}", sub.get_name());
        render(name.clone(), sub.clone().name(name).version(env!("CARGO_PKG_VERSION")));
    }
    pages
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn man_pages_are_current() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
        let update = std::env::var_os("UPDATE_MAN").is_some();
        let mut stale = Vec::new();
        for (name, roff) in super::pages() {
            let path = dir.join(&name);
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &roff).unwrap();
            } else if std::fs::read(&path).ok().as_deref() != Some(&roff[..]) {
                stale.push(name);
            }
        }
        assert!(stale.is_empty(), "man pages out of date: {stale:?}; run `UPDATE_MAN=1 cargo test --lib man_pages`");
    }
}
