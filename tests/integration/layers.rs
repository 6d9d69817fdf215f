//! The layers of `src/`: a module names only the modules below it (ARCHITECTURE.md, "The
//! layers").
//!
//! The test reads every file under `src/`, collects the top-level modules it names through
//! `crate::<module>` (in `use` lines and in paths, `crate::{a, b}` groups included) and through
//! `super::` chains that climb to the crate root, and fails, naming the file and the line, when
//! a module names one of its own layer or of a layer above. `lib.rs` and `main.rs` are free.
//!
//! Test code is not checked: a file a `#[cfg(test)] mod name;` declares, and every item under
//! `#[cfg(test)]` in the other files. A unit test may hold its module to what a higher layer
//! expects of it (`exec::external`'s request names every column the report knows), as
//! rust-analyzer's crates reach up through dev-dependencies; nothing it names ships in the
//! binary. Comments, strings and character literals are skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, low to high. A module names only modules of the layers before its own; modules
/// of one layer are peers and name neither each other nor anything above them.
const LAYERS: &[&[&str]] = &[
    // Leaves: the one way files are written and read, the one way people are told things,
    // "did you mean ...?", numbers in messages, the distribution quantiles of the statistics.
    &["files", "console", "suggest", "number", "statistics"],
    // The shared vocabulary: what a scenario is, what an evaluator measures.
    &["scenario", "measurement"],
    // The two built-in evaluators: pure libraries of a scenario and a load.
    &["model", "sim"],
    // Trace files, read for the simulator.
    &["trace"],
    // The spec format.
    &["spec"],
    // Experiment -> task graph.
    &["plan"],
    // The result row, how rows are built, Parquet.
    &["store"],
    // Evaluating, gathering and aggregating the tasks; the cache; the executors.
    &["exec"],
    // Rendering a bundle from rows.
    &["report"],
    // Writing a run's bundle.
    &["bundle"],
    // The command line.
    &["cli"],
];

/// Back-edges that remain, each a known debt (ARCHITECTURE.md, "The layers"). Each entry:
/// (file, the module it may name for now). Delete an entry when its edge is gone; the test
/// fails on an entry that no longer matches.
const ALLOWED: &[(&str, &str)] = &[];

/// One name of a top-level module in a file.
#[derive(Debug)]
struct Use {
    line: usize,
    module: String,
}

#[test]
fn lower_layers_never_name_higher_ones() {
    let rank: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(rank, layer)| layer.iter().map(move |&module| (module, rank)))
        .collect();
    let mut problems = Vec::new();
    let mut allowed_used = BTreeSet::new();
    // Which module names which, for the mutual-import check.
    let mut edges: BTreeMap<(String, String), String> = BTreeMap::new();
    let files = source_files(Path::new("src"));
    let tests = test_files(&files);
    for path in &files {
        let name = path.display().to_string();
        let Some(module) = top_module(path) else { continue };
        if tests.contains(path) {
            continue;
        }
        let Some(&own) = rank.get(module.as_str()) else {
            problems.push(format!(
                "{name}: module `{module}` is in no layer; add it to LAYERS in \
                 tests/integration/layers.rs (and to ARCHITECTURE.md)"
            ));
            continue;
        };
        let text = std::fs::read_to_string(path).expect("a source file");
        for Use { line, module: named } in names(path, &text) {
            if named == module {
                continue;
            }
            let Some(&other) = rank.get(named.as_str()) else { continue };
            if ALLOWED.contains(&(name.as_str(), named.as_str())) {
                allowed_used.insert((name.clone(), named.clone()));
                continue;
            }
            edges.entry((module.clone(), named.clone())).or_insert(format!("{name}:{line}"));
            if other < own {
                continue;
            }
            let how = if other == own { "a peer in its own layer" } else { "a higher layer" };
            problems.push(format!("{name}:{line}: `{module}` names `{named}`, {how}"));
        }
    }
    for ((from, to), at) in &edges {
        if from < to
            && let Some(back) = edges.get(&(to.clone(), from.clone()))
        {
            problems.push(format!("`{from}` and `{to}` name each other ({at} and {back})"));
        }
    }
    for (file, module) in ALLOWED {
        if !allowed_used.contains(&(file.to_string(), module.to_string())) {
            problems.push(format!(
                "ALLOWED lists ({file}, {module}), which no longer occurs: delete the entry"
            ));
        }
    }
    assert!(problems.is_empty(), "the layers are broken:\n{}", problems.join("\n"));
}

/// The crate denies `unsafe` code (`Cargo.toml`, `src/lib.rs`), and one file allows it: the
/// cache hint of `sim::prefetch`, whose module docs say why. Every other file, test code
/// included, has no `unsafe` block, function or impl, and allows no lint that would let one in.
#[test]
fn unsafe_code_stays_in_the_cache_hint() {
    const ALLOWED_UNSAFE: &str = "src/sim/prefetch.rs";
    let mut problems = Vec::new();
    let mut seen = false;
    for path in source_files(Path::new("src")) {
        let text = std::fs::read_to_string(&path).expect("a source file");
        let code = blank_comments_and_strings(&text);
        let allowed = path == Path::new(ALLOWED_UNSAFE);
        seen |= allowed;
        for (n, line) in code.lines().enumerate() {
            let words: Vec<&str> =
                line.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
            let unsafe_word = words.contains(&"unsafe");
            let lint =
                line.contains("unsafe_code") && (line.contains("allow") || line.contains("expect"));
            if (unsafe_word || lint) && !allowed {
                problems.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(seen, "{ALLOWED_UNSAFE} is gone: update this test and Cargo.toml's lint");
    assert!(problems.is_empty(), "unsafe code outside {ALLOWED_UNSAFE}:\n{}", problems.join("\n"));
}

/// Every `.rs` file under `dir`, sorted.
fn source_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a source directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The top-level module a file belongs to (`src/exec/slurm/mod.rs` -> `exec`); `None` for the
/// crate roots.
fn top_module(path: &Path) -> Option<String> {
    let relative = path.strip_prefix("src").ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    match first {
        "lib.rs" | "main.rs" => None,
        _ => Some(first.trim_end_matches(".rs").to_string()),
    }
}

/// The module path of a file (`src/exec/slurm/mod.rs` -> `["exec", "slurm"]`).
fn module_path(path: &Path) -> Vec<String> {
    let relative = path.strip_prefix("src").unwrap_or(path);
    let mut parts: Vec<String> =
        relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
    if let Some(last) = parts.pop() {
        match last.as_str() {
            "mod.rs" | "lib.rs" | "main.rs" => {}
            _ => parts.push(last.trim_end_matches(".rs").to_string()),
        }
    }
    parts
}

/// The files declared by `#[cfg(test)] mod name;` (and the files below them).
fn test_files(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut tests = BTreeSet::new();
    for path in files {
        let text = std::fs::read_to_string(path).expect("a source file");
        let code = blank_comments_and_strings(&text);
        let lines: Vec<&str> = code.lines().map(str::trim).collect();
        for (index, line) in lines.iter().enumerate() {
            if *line != "#[cfg(test)]" {
                continue;
            }
            let Some(next) = lines[index + 1..].iter().find(|l| !l.starts_with("#[")) else {
                continue;
            };
            let declared = next
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ")
                .strip_prefix("mod ")
                .and_then(|rest| rest.strip_suffix(';'));
            if let Some(name) = declared {
                let mut dir = PathBuf::from("src");
                dir.extend(module_path(path));
                tests.insert(dir.join(format!("{name}.rs")));
                tests.insert(dir.join(name).join("mod.rs"));
                let below = dir.join(name);
                tests.extend(files.iter().filter(|f| f.starts_with(&below)).cloned());
            }
        }
    }
    tests
}

/// `text` with comments, strings and character literals blanked out (newlines kept, so line
/// numbers stay), and the items under `#[cfg(test)]` removed.
fn strip(text: &str) -> String {
    without_test_items(&blank_comments_and_strings(text))
}

/// `text` with comments, strings and character literals blanked out, newlines kept.
fn blank_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && raw_prefix(&chars, i) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: String =
                std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let rest: String = chars[j + 1..].iter().collect();
            let end = rest.find(&close).map_or(chars.len(), |at| {
                j + 1 + rest[..at].chars().count() + close.chars().count()
            });
            for &skipped in &chars[i..end] {
                out.push(blank(skipped));
            }
            i = end;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal ('x', '\n', '\u{..}'); a lifetime ('a) is left as it is.
            let mut j = i + 1;
            if chars.get(j) == Some(&'\\') {
                j += 2;
            } else {
                j += 1;
            }
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            for _ in i..=j.min(chars.len() - 1) {
                out.push(' ');
            }
            i = j + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether the `r` at `i` starts a raw string (`r"`, `r#"`, `br"`): it does not continue an
/// identifier, unless that identifier is the `b` of a raw byte string.
fn raw_prefix(chars: &[char], i: usize) -> bool {
    let ident = |at: usize| chars[at].is_alphanumeric() || chars[at] == '_';
    match i {
        0 => true,
        1 => !ident(0) || chars[0] == 'b',
        _ => !ident(i - 1) || (chars[i - 1] == 'b' && !ident(i - 2)),
    }
}

/// `code` (comments and strings already blanked) with every item under `#[cfg(test)]`
/// blanked: the attribute's next item up to its `;` or the end of its braces.
fn without_test_items(code: &str) -> String {
    let mut out: Vec<char> = code.chars().collect();
    let marker: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut i = 0;
    while i + marker.len() <= out.len() {
        if out[i..i + marker.len()] != marker[..] {
            i += 1;
            continue;
        }
        let mut j = i + marker.len();
        let mut depth = 0usize;
        while j < out.len() {
            match out[j] {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                ';' if depth == 0 => break,
                _ => {}
            }
            j += 1;
        }
        let end = j.min(out.len() - 1);
        for c in &mut out[i..=end] {
            if *c != '\n' {
                *c = ' ';
            }
        }
        i = j + 1;
    }
    out.into_iter().collect()
}

/// The top-level modules `path` names, with the line of each mention.
fn names(path: &Path, text: &str) -> Vec<Use> {
    let code = strip(text);
    let own = module_path(path);
    let mut found = Vec::new();
    for (index, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = find_path_start(rest) {
            let tail = &rest[at..];
            let (module, consumed) = if let Some(after) = tail.strip_prefix("crate::") {
                (after.to_string(), "crate::".len())
            } else {
                // `super::super::x`: climbs from the file's module; only a climb to the crate
                // root names a top-level module.
                let mut depth = 0;
                let mut after = tail;
                while let Some(next) = after.strip_prefix("super::") {
                    depth += 1;
                    after = next;
                }
                // In `a/mod.rs` (module a) `super` is the crate root after one step; in
                // `a/b.rs` (module a::b) after two.
                if depth < own.len() {
                    rest = &tail[depth * "super::".len()..];
                    continue;
                }
                (after.to_string(), depth * "super::".len())
            };
            for name in first_segments(&module) {
                found.push(Use { line: index + 1, module: name });
            }
            rest = &tail[consumed..];
        }
    }
    found
}

/// Where the next `crate::` or `super::` path starts in `line` (not inside an identifier).
fn find_path_start(line: &str) -> Option<usize> {
    let candidates = ["crate::", "super::"].into_iter().filter_map(|word| {
        line.match_indices(word).map(|(at, _)| at).find(|&at| {
            let before = line[..at].chars().next_back();
            // `$crate::` (a macro) counts; `mycrate::` does not.
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    });
    candidates.min()
}

/// The first segment after `crate::`: one name, or each name of a `{a, b::c}` group.
fn first_segments(after: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
    };
    let Some(group) = after.trim_start().strip_prefix('{') else {
        return vec![ident(after)].into_iter().filter(|s| !s.is_empty()).collect();
    };
    let mut names = Vec::new();
    let mut depth = 0;
    let mut start = true;
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => start = true,
            _ if start && !c.is_whitespace() => {
                let name = ident(&group[at..]);
                if !name.is_empty() && name != "self" {
                    names.push(name);
                }
                start = false;
            }
            _ => {}
        }
    }
    names
}

/// The scanner itself: comments, strings and test items are skipped, groups and `super`
/// chains are followed.
#[test]
fn the_scanner_finds_paths_in_code_only() {
    let text = r##"//! Uses `crate::cli` in a doc comment.
use crate::{exec::cache, report};
fn f() -> String {
    let s = "crate::bundle";
    let r = r#"crate::cli"#;
    let c = '"';
    let lifetime: &'static str = "";
    super::super::store::row::Row::default();
    crate::plan::build()
}
#[cfg(test)]
mod tests {
    use crate::cli;
}
#[cfg(test)]
use crate::bundle;
/* crate::cli */
"##;
    let found: Vec<(usize, String)> = names(Path::new("src/spec/validate.rs"), text)
        .into_iter()
        .map(|Use { line, module }| (line, module))
        .collect();
    let expected = [(2, "exec"), (2, "report"), (8, "store"), (9, "plan")]
        .map(|(line, module)| (line, module.to_string()));
    assert_eq!(found, expected);
    // One `super` from `spec/mod.rs` is the crate root already; from `spec/validate.rs` it is
    // `spec`.
    let at_root = names(Path::new("src/spec/mod.rs"), "use super::plan::Plan;");
    assert_eq!(at_root.iter().map(|u| u.module.as_str()).collect::<Vec<_>>(), ["plan"]);
    assert!(names(Path::new("src/spec/validate.rs"), "use super::plan::Plan;").is_empty());
}
