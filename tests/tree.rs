//! The tree as issue 18's "done when" asks: the README's tour matches it
//! (every path the tour names exists, and every folder of the repository
//! and every module of `src/` is named in it, so a new module or a removed
//! folder shows here rather than in a newcomer's confusion), and no source
//! file of `src/` is over 900 lines (one concern per file).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The tour: the first fenced block after `## Tour`.
fn tour() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let at = readme
        .find("\n## Tour\n")
        .expect("README has a ## Tour section");
    let rest = &readme[at..];
    let open = rest.find("```\n").expect("the tour is a fenced block") + 4;
    let close = rest[open..].find("```").expect("the tour's block ends");
    rest[open..open + close].to_string()
}

/// The paths a tour line starts with: `src/gpu/, kernels/  the ...` →
/// `src/gpu/`, `kernels/`; `spec/FORMAT.md      the ...` → `spec/FORMAT.md`.
fn named_paths(tour: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in tour.lines().filter(|l| !l.starts_with(' ')) {
        for word in line.split_whitespace() {
            out.push(word.trim_end_matches(',').to_string());
            if !word.ends_with(',') {
                break;
            }
        }
    }
    out
}

#[test]
fn every_path_the_tour_names_exists() {
    let t = tour();
    let paths = named_paths(&t);
    assert!(paths.len() > 10, "tour parsed to {paths:?}");
    for p in paths {
        assert!(
            root().join(&p).exists(),
            "README tour names {p}, which is not in the tree"
        );
    }
}

/// Names of the entries of `dir` (relative to the repository root),
/// without hidden ones.
fn entries(dir: &Path) -> Vec<(String, bool)> {
    let mut v: Vec<(String, bool)> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            (name, e.file_type().unwrap().is_dir())
        })
        .filter(|(n, _)| !n.starts_with('.'))
        .collect();
    v.sort();
    v
}

#[test]
fn the_tour_names_every_folder_and_module() {
    let t = tour();
    // Every folder at the top (build output and third_party/, the
    // git-ignored peers' code that lab scripts fetch, aside).
    for (name, is_dir) in entries(Path::new("")) {
        if is_dir && name != "target" && name != "third_party" {
            assert!(
                t.contains(&format!("{name}/")),
                "README tour does not name the folder {name}/"
            );
        }
    }
    // Every module of the library: src/NAME/ or src/NAME.rs (lib.rs is the
    // crate itself).
    for (name, is_dir) in entries(Path::new("src")) {
        let want = if is_dir {
            format!("src/{name}/")
        } else if name == "lib.rs" {
            continue;
        } else {
            name.clone()
        };
        assert!(
            t.contains(&want),
            "README tour does not name src/{name} (as {want})"
        );
    }
}

/// Longest a source file of `src/` may be (issue 18: one concern per file).
const MAX_LINES: usize = 900;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_source_file_is_over_900_lines() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    assert!(files.len() > 50);
    for f in files {
        let n = std::fs::read_to_string(&f).unwrap().lines().count();
        assert!(
            n <= MAX_LINES,
            "{} has {n} lines (at most {MAX_LINES}: split it by concern)",
            f.display()
        );
    }
}
