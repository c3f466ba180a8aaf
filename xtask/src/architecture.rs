//! The shape checks of `cargo xtask test` (docs/architecture.md): no import circles
//! between the modules of a crate, and no source file longer than [`MAX_LINES`] lines
//! (comments included) before its test module. The crate graph needs no check: cargo
//! refuses a cycle between crates.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::project::{Project, relative};

/// Longest source file, counted up to its `#[cfg(test)]` module.
pub(crate) const MAX_LINES: usize = 700;

/// The source folders of the workspace's crates, relative to the root.
const CRATE_SOURCES: [&str; 8] = [
    "shared/src",
    "crates/llm/src",
    "crates/exec/src",
    "crates/neural/src",
    "crates/repro/src",
    "server/src",
    "frontend/src",
    "xtask/src",
];

pub(crate) fn check(project: &Project) -> Result<()> {
    let mut problems = Vec::new();
    for source in CRATE_SOURCES {
        let files = rust_files(&project.root.join(source))?;
        let modules: BTreeMap<String, String> = files
            .iter()
            .map(|(module, path)| {
                let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
                let lines = text
                    .lines()
                    .take_while(|line| !line.starts_with("#[cfg(test)]"))
                    .count();
                let code = code_before_tests(&text);
                if lines > MAX_LINES {
                    problems.push(format!(
                        "{source}/{}: {lines} lines before its tests (at most {MAX_LINES}); split it by concept",
                        relative(path, &project.root.join(source))
                    ));
                }
                Ok((module.clone(), code))
            })
            .collect::<Result<_>>()?;
        for circle in circles(&imports(&modules)) {
            problems.push(format!("{source}: an import circle between {}", circle.join(", ")));
        }
    }
    if !problems.is_empty() {
        bail!("{} shape problems:\n  {}", problems.len(), problems.join("\n  "));
    }
    println!("architecture: no import circles, every file within {MAX_LINES} lines");
    Ok(())
}

/// The crate's modules (`a::b`; the root is the empty name) and their files; `src/bin` holds other
/// crates and is left out.
fn rust_files(src: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut found = Vec::new();
    let mut folders = vec![src.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).with_context(|| format!("reading {}", folder.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                if path != src.join("bin") {
                    folders.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push((module_of(&path, src), path));
            }
        }
    }
    found.sort();
    Ok(found)
}

fn module_of(path: &Path, src: &Path) -> String {
    let relative = path.strip_prefix(src).unwrap_or(path).with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|last| ["mod", "lib", "main"].contains(&last.as_str()))
    {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file up to its test module, without comment lines.
fn code_before_tests(text: &str) -> String {
    text.lines()
        .take_while(|line| !line.starts_with("#[cfg(test)]"))
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Which modules each module names through `crate::` and `super::` paths (its own
/// submodules and ancestors left out: a child naming its parent is no circle).
fn imports(modules: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    modules
        .iter()
        .map(|(module, code)| {
            let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
            let mut named = BTreeSet::new();
            for (prefix, base) in [("crate::", ""), ("super::", parent)] {
                for path in paths_after(code, prefix) {
                    let (mut base, mut path) = (base, path.as_str());
                    while let Some(rest) = path.strip_prefix("super::") {
                        base = base.rsplit_once("::").map_or("", |(p, _)| p);
                        path = rest;
                    }
                    let full = if base.is_empty() {
                        path.to_owned()
                    } else {
                        format!("{base}::{path}")
                    };
                    if let Some(target) = longest_module(&full, modules)
                        && target != *module
                        && !is_ancestor(&target, module)
                        && !is_ancestor(module, &target)
                    {
                        named.insert(target);
                    }
                }
            }
            (module.clone(), named)
        })
        .collect()
}

fn is_ancestor(ancestor: &str, module: &str) -> bool {
    ancestor.is_empty() || module.starts_with(&format!("{ancestor}::"))
}

/// The paths after each `prefix` in `code`: `a::b::C` from `crate::a::b::C`, and each
/// member of a `crate::{a, b::c}` group.
fn paths_after(code: &str, prefix: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let boundary = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
        rest = &rest[at + prefix.len()..];
        if !boundary {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            paths.extend(group[..end].split(',').map(|p| path_of(p.trim())));
        } else {
            paths.push(path_of(rest));
        }
    }
    paths.retain(|p| !p.is_empty() && p != "self");
    paths
}

fn path_of(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
        .collect::<String>()
        .trim_end_matches(':')
        .to_owned()
}

fn longest_module(path: &str, modules: &BTreeMap<String, String>) -> Option<String> {
    let segments: Vec<&str> = path.split("::").collect();
    (1..=segments.len())
        .rev()
        .map(|n| segments[..n].join("::"))
        .find(|candidate| modules.contains_key(candidate))
}

/// The import circles: strongly connected groups of more than one module (Tarjan).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, node: &'g str) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            for next in self.graph.get(node).into_iter().flatten() {
                let next = next.as_str();
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.stack.contains(&next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut group = Vec::new();
                while let Some(member) = self.stack.pop() {
                    group.push(member.to_owned());
                    if member == node {
                        break;
                    }
                }
                if group.len() > 1 {
                    group.sort();
                    self.found.push(group);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            walk.visit(node);
        }
    }
    walk.found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modules(files: &[(&str, &str)]) -> BTreeMap<String, String> {
        files
            .iter()
            .map(|(m, code)| ((*m).to_owned(), (*code).to_owned()))
            .collect()
    }

    #[test]
    fn a_circle_through_crate_and_super_paths_is_found() {
        let m = modules(&[
            ("", "mod app; mod http;"),
            ("app", "use crate::http::repro::Store;"),
            ("http", "pub mod repro;"),
            (
                "http::repro",
                "use super::super::app::AppState; use crate::{app, other};",
            ),
            ("other", "fn f() { crate::other::g(); }"),
        ]);
        let graph = imports(&m);
        assert_eq!(graph["app"], BTreeSet::from(["http::repro".to_owned()]));
        assert!(graph["http::repro"].contains("app") && graph["http::repro"].contains("other"));
        assert_eq!(circles(&graph), vec![vec!["app".to_owned(), "http::repro".to_owned()]]);
    }

    #[test]
    fn parents_children_and_comments_are_no_circle() {
        let m = modules(&[
            ("", "mod ws;"),
            ("ws", "mod jobs; use jobs::Spec; fn f() { crate::ws::jobs::run(); }"),
            ("ws::jobs", "use super::{LIVE, error};"),
        ]);
        assert!(circles(&imports(&m)).is_empty());
        let code = code_before_tests("use a;\n// crate::x::y\n#[cfg(test)]\nmod tests { use crate::b; }\n");
        assert_eq!(code, "use a;");
    }

    #[test]
    fn modules_are_named_from_their_files() {
        let src = Path::new("/x/src");
        assert_eq!(module_of(Path::new("/x/src/lib.rs"), src), "");
        assert_eq!(module_of(Path::new("/x/src/ws/mod.rs"), src), "ws");
        assert_eq!(module_of(Path::new("/x/src/ws/jobs.rs"), src), "ws::jobs");
    }
}
