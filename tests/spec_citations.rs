//! Every spec citation in the code points at a section that exists.
//!
//! Code cites the spec section it implements (`spec/FORMAT.md §5.6`,
//! `FORMAT.md §4`, `spec/DECODER.md §6c`, lists such as `§5.3–§5.4` or
//! `§4, §5`). This test reads the headings of the spec files (`## 6c. …`,
//! `### 4.5 …`) and fails on a citation in src/, kernels/ or tests/ whose
//! document or section does not exist, so renumbering the spec or citing a
//! document outside the repository (the design card, once cited as
//! `DESIGN §N`) is caught here. A bare `§N` must name a section of some
//! spec file, and in src/format/ (which implements FORMAT.md alone) a
//! section of FORMAT.md.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Section ids of a Markdown file's numbered headings: `## 6c. Offsets` →
/// `6c`, `### 4.5 Planes` → `4.5`.
fn sections(markdown: &str) -> BTreeSet<String> {
    markdown
        .lines()
        .filter_map(|l| {
            let rest = l.trim_start_matches('#');
            if rest.len() == l.len() || !rest.starts_with(' ') {
                return None;
            }
            let id = rest.trim_start().split(' ').next()?.trim_end_matches('.');
            id.starts_with(|c: char| c.is_ascii_digit())
                .then(|| id.to_string())
        })
        .collect()
}

/// The spec documents: file name (`FORMAT.md`) → section ids.
fn spec_sections() -> BTreeMap<String, BTreeSet<String>> {
    let mut docs = BTreeMap::new();
    for e in std::fs::read_dir(root().join("spec")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            docs.insert(name, sections(&std::fs::read_to_string(&p).unwrap()));
        }
    }
    docs
}

/// Reads one section id at the start of `s` (after a `§`).
fn section_id(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .unwrap_or(s.len());
    s[..end].trim_end_matches('.')
}

/// The citations in one line: (document as written, `spec/` kept, section
/// id). A citation is a document name ending in `.md`, then ` §ID`,
/// then any further `§ID` joined by `, `, `–`, `-`, ` and `, ` or `, `/`.
/// `DESIGN §N` is returned with the document `DESIGN`.
fn citations(line: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (at, _) in line.match_indices(".md") {
        let name_start = line[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .map_or(0, |i| i + 1);
        let name = &line[name_start..at];
        let doc = if line[..name_start].ends_with("spec/") {
            format!("spec/{name}.md")
        } else {
            format!("{name}.md")
        };
        let mut rest = line[at + 3..].trim_start_matches([' ', '\u{a0}']);
        if !rest.starts_with('§') {
            continue;
        }
        loop {
            rest = &rest['§'.len_utf8()..];
            let id = section_id(rest);
            out.push((doc.clone(), id.to_string()));
            rest = &rest[id.len()..];
            let next = [", ", "–", "-", " and ", " or ", "/", " – "]
                .iter()
                .find_map(|sep| rest.strip_prefix(sep))
                .filter(|r| r.starts_with('§'));
            match next {
                Some(r) => rest = r,
                None => break,
            }
        }
    }
    let design = concat!("DESIGN", " §");
    for (at, _) in line.match_indices(design) {
        let id = section_id(&line[at + design.len()..]);
        out.push(("DESIGN".to_string(), id.to_string()));
    }
    out
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, files);
        } else if p
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| ["rs", "cu", "cuh", "h", "md", "py"].contains(&x))
        {
            files.push(p);
        }
    }
}

/// Every citation that names a missing document or section, as
/// `file:line: citation`.
fn broken(docs: &BTreeMap<String, BTreeSet<String>>, file: &str, text: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let any: BTreeSet<&String> = docs.values().flatten().collect();
    let format_only = file.starts_with("src/format/");
    for (n, line) in text.lines().enumerate() {
        let explicit = citations(line);
        for (at, _) in line.match_indices('§') {
            let id = section_id(&line[at + '§'.len_utf8()..]);
            if id.is_empty() || explicit.iter().any(|(_, e)| e == id) {
                continue;
            }
            let known = if format_only {
                docs["FORMAT.md"].contains(id)
            } else {
                any.contains(&id.to_string())
            };
            if !known {
                bad.push(format!("{file}:{}: §{id}: no such section", n + 1));
            }
        }
        for (doc, id) in citations(line) {
            let in_spec = doc.strip_prefix("spec/");
            let name = in_spec.unwrap_or(&doc);
            let why = match docs.get(name) {
                _ if doc == "DESIGN" => Some("the design card is not in the repository"),
                Some(ids) if !ids.contains(&id) => Some("no such section"),
                Some(_) => None,
                None if in_spec.is_some() => Some("no such spec file"),
                // Other documents (README.md, bench/*.md) are not checked.
                None => None,
            };
            if let Some(why) = why {
                bad.push(format!("{file}:{}: {doc} §{id}: {why}", n + 1));
            }
        }
    }
    bad
}

#[test]
fn every_spec_citation_names_an_existing_section() {
    let docs = spec_sections();
    assert!(docs["FORMAT.md"].contains("5.6") && docs["DECODER.md"].contains("6c"));
    let mut files = Vec::new();
    for d in ["src", "kernels", "tests"] {
        walk(&root().join(d), &mut files);
    }
    files.sort();
    let this = Path::new(file!()).file_name().unwrap();
    let (mut bad, mut seen) = (Vec::new(), 0);
    for f in &files {
        if f.file_name() == Some(this) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(root()).unwrap().display().to_string();
        seen += text.lines().map(|l| citations(l).len()).sum::<usize>();
        bad.extend(broken(&docs, &rel, &text));
    }
    assert!(
        seen >= 40,
        "only {seen} citations found: is the parser broken?"
    );
    assert!(
        bad.is_empty(),
        "{} broken citations:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The parser finds what it must, so the test above can fail.
#[test]
fn the_citation_parser_catches_bad_citations() {
    let docs = spec_sections();
    let cite = |l: &str| citations(l);
    assert_eq!(
        cite("see spec/FORMAT.md §5.3–§5.4 and DECODER.md §6c."),
        [
            ("spec/FORMAT.md".into(), "5.3".into()),
            ("spec/FORMAT.md".into(), "5.4".into()),
            ("DECODER.md".into(), "6c".into())
        ]
    );
    assert_eq!(
        cite("(spec/FORMAT.md §4, §5)").len(),
        2,
        "a list cites each section"
    );
    let bad = broken(
        &docs,
        "x.rs",
        concat!(
            "// spec/FORMAT.md §4.9\n",
            "// FORMAT.md §99\n",
            "// spec/NOTES.md §1\n",
            "// DESIGN",
            " §3\n",
            "// spec/DECODER.md §6c, spec/FORMAT.md §10\n",
            "// the sidecar (§5.3) and §6b; not §42\n"
        ),
    );
    assert_eq!(bad.len(), 5, "{bad:?}");
    assert!(bad[4].starts_with("x.rs:6: §42"), "{bad:?}");
    let in_format = broken(&docs, "src/format/x.rs", "// see §6b\n");
    assert_eq!(
        in_format.len(),
        1,
        "src/format/ cites FORMAT.md: {in_format:?}"
    );
    assert!(bad[0].starts_with("x.rs:1: spec/FORMAT.md §4.9"), "{bad:?}");
    assert!(bad[1].starts_with("x.rs:2: FORMAT.md §99"), "{bad:?}");
    assert!(bad[2].starts_with("x.rs:3: spec/NOTES.md §1"), "{bad:?}");
    assert!(bad[3].starts_with("x.rs:4: DESIGN §3"), "{bad:?}");
}
