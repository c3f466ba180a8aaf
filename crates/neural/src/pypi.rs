//! Real functions for the corpus: top-level functions of permissively licensed wheels
//! (downloaded with `python3 -m pip download NAME --no-deps -d DIR`), each turned into a
//! program that calls it once with arguments drawn from a seeded RNG.
//!
//! Deterministic: archives and their files are read in name order, and each function's
//! arguments come from a generator seeded by the corpus seed and the function's name.

use std::io::{Cursor, Read};
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};
use tree_sitter::Node;

use super::generator::Program;
use replayground_exec::python;

/// Bodies longer than this make traces too long for the model's context.
const MAX_FUNCTION_LINES: usize = 40;
/// Marks real-function programs in `programs.jsonl` (generated ones are levels 0..=MAX).
pub const PYPI_LEVEL: u8 = u8::MAX;

#[derive(Debug, thiserror::Error)]
pub enum PypiError {
    #[error(
        "cannot read the package folder {path}: {source}; pass --pypi a folder made by `python3 -m pip download NAME --no-deps -d DIR`"
    )]
    Folder { path: String, source: std::io::Error },
}

/// The programs made from a folder of wheels, and why others were left out.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PypiPrograms {
    pub programs: Vec<Program>,
    /// One line per skipped archive (license, format, unreadable).
    pub notes: Vec<String>,
    pub archives_used: u64,
    /// Top-level functions seen in permissive archives, eligible or not.
    pub functions_seen: u64,
}

/// Reads every `.whl` in `dir` (sdists are noted and skipped).
pub fn load_dir(dir: &Path, seed: u64) -> Result<PypiPrograms, PypiError> {
    let folder_error = |source| PypiError::Folder {
        path: dir.display().to_string(),
        source,
    };
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .map_err(folder_error)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    names.sort();
    let mut out = PypiPrograms::default();
    for path in names {
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if !has_extension(&name, "whl") {
            out.notes.push(format!("{name}: skipped (only wheels are read)"));
            continue;
        }
        match std::fs::read(&path) {
            Ok(bytes) => add_wheel(&name, &bytes, seed, &mut out),
            Err(e) => out.notes.push(format!("{name}: skipped (cannot read: {e})")),
        }
    }
    Ok(out)
}

/// Adds the eligible functions of one wheel, or a note saying why it was skipped.
pub fn add_wheel(name: &str, bytes: &[u8], seed: u64, out: &mut PypiPrograms) {
    let Ok(mut archive) = zip::ZipArchive::new(Cursor::new(bytes)) else {
        out.notes.push(format!("{name}: skipped (not a zip archive)"));
        return;
    };
    let mut files: Vec<(String, String)> = Vec::new();
    for i in 0..archive.len() {
        let Ok(mut file) = archive.by_index(i) else { continue };
        let Ok(path) = file.name().map(std::borrow::Cow::into_owned) else {
            continue;
        };
        let wanted = has_extension(&path, "py") || path.ends_with(".dist-info/METADATA");
        let mut text = String::new();
        if wanted && file.read_to_string(&mut text).is_ok() {
            files.push((path, text));
        }
    }
    files.sort();
    let Some((_, metadata)) = files.iter().find(|(path, _)| path.ends_with(".dist-info/METADATA")) else {
        out.notes.push(format!("{name}: skipped (no METADATA)"));
        return;
    };
    if let Err(license) = permissive(metadata) {
        out.notes.push(format!(
            "{name}: skipped (license {license:?} is not MIT, BSD, Apache, PSF or ISC)"
        ));
        return;
    }
    out.archives_used += 1;
    for (path, source) in files.iter().filter(|(path, _)| has_extension(path, "py")) {
        for (function, program) in module_programs(source, &mut out.functions_seen) {
            let qualified = format!("{}:{function}", python::module_name(path));
            let fn_seed = seed ^ name_hash(&qualified);
            let mut rng = ChaCha8Rng::seed_from_u64(fn_seed);
            let call = program.call(&mut rng);
            out.programs.push(Program {
                source: format!("{}{}\n\n{call}\n", program.prefix, program.function),
                seed: fn_seed,
                level: PYPI_LEVEL,
            });
        }
    }
}

/// `Ok` for a permissive license; otherwise the license text found.
fn permissive(metadata: &str) -> Result<(), String> {
    let mut found = Vec::new();
    for line in metadata.lines() {
        // Headers end at the first blank line; the description follows.
        if line.is_empty() {
            break;
        }
        for prefix in ["License:", "License-Expression:", "Classifier: License ::"] {
            if let Some(value) = line.strip_prefix(prefix) {
                found.push(value.trim().to_owned());
            }
        }
    }
    let is_permissive = found.iter().any(|text| {
        text.contains("Python Software Foundation")
            || text
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|word| matches!(word, "MIT" | "BSD" | "0BSD" | "Apache" | "PSF" | "ISC"))
    });
    if is_permissive { Ok(()) } else { Err(found.join("; ")) }
}

fn has_extension(path: &str, extension: &str) -> bool {
    Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(extension))
}

fn name_hash(text: &str) -> u64 {
    let digest = Sha256::digest(text.as_bytes());
    u64::from_le_bytes(digest[..8].try_into().expect("a SHA-256 has 32 bytes"))
}

/// An eligible function of a module, ready to be called.
struct Callable {
    /// The module's absolute top-level imports, each on its own line.
    prefix: String,
    function: String,
    name: String,
    params: Vec<String>,
}

/// The eligible top-level functions of a module (name, callable), counting all it sees.
fn module_programs(source: &str, seen: &mut u64) -> Vec<(String, Callable)> {
    let Some(tree) = python::parse(source) else {
        return Vec::new();
    };
    let root = tree.root_node();
    let text = |node: Node<'_>| source[node.byte_range()].to_owned();
    let mut prefix = String::new();
    let mut cursor = root.walk();
    for node in root.named_children(&mut cursor) {
        let import = text(node);
        let relative = import.starts_with("from .");
        if matches!(
            node.kind(),
            "import_statement" | "import_from_statement" | "future_import_statement"
        ) && !relative
        {
            prefix.push_str(&import);
            prefix.push('\n');
        }
    }
    if !prefix.is_empty() {
        prefix.push_str("\n\n");
    }
    let mut out = Vec::new();
    let mut cursor = root.walk();
    for node in root.named_children(&mut cursor) {
        if node.kind() != "function_definition" {
            continue;
        }
        *seen += 1;
        let function = text(node);
        let Some(name) = node.child_by_field_name("name").map(text) else {
            continue;
        };
        let Some(params) = node
            .child_by_field_name("parameters")
            .and_then(|p| required_params(p, source))
        else {
            continue;
        };
        let eligible = !function.starts_with("async")
            && !name.starts_with("__")
            && !params.is_empty()
            && function.lines().count() <= MAX_FUNCTION_LINES
            && !has_yield(node);
        if eligible {
            out.push((
                name.clone(),
                Callable {
                    prefix: prefix.clone(),
                    function,
                    name,
                    params,
                },
            ));
        }
    }
    out
}

/// Required positional parameter names; `None` when there are splats or keyword-only ones.
fn required_params(parameters: Node<'_>, source: &str) -> Option<Vec<String>> {
    let mut names = Vec::new();
    let mut cursor = parameters.walk();
    for param in parameters.named_children(&mut cursor) {
        match param.kind() {
            "identifier" => names.push(source[param.byte_range()].to_owned()),
            "typed_parameter" => names.push(source[param.named_child(0)?.byte_range()].to_owned()),
            "default_parameter" | "typed_default_parameter" | "comment" => {}
            _ => return None,
        }
    }
    Some(names)
}

fn has_yield(node: Node<'_>) -> bool {
    if node.kind() == "yield" {
        return true;
    }
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        // A nested function's yield makes that function a generator, not this one.
        .filter(|child| child.kind() != "function_definition")
        .any(has_yield)
}

const WORDS: [&str; 8] = ["ab", "cat", "xyz", "hello", "q", "level", "go", "a b"];

impl Callable {
    /// `print(repr(name(args)))` with arguments guided by the parameter names.
    fn call(&self, rng: &mut ChaCha8Rng) -> String {
        let args: Vec<String> = self.params.iter().map(|p| argument(p, rng)).collect();
        format!("print(repr({}({})))", self.name, args.join(", "))
    }
}

fn argument(param: &str, rng: &mut ChaCha8Rng) -> String {
    let lower = param.to_ascii_lowercase();
    match lower.as_str() {
        "n" | "k" | "i" | "j" | "m" | "size" | "count" | "times" | "width" | "index" | "start" | "stop" | "step"
        | "num" | "number" | "length" => rng.random_range(0..6).to_string(),
        "s" | "text" | "string" | "word" | "name" | "sep" | "prefix" | "suffix" | "char" | "line" => {
            format!("{:?}", WORDS[rng.random_range(0..WORDS.len())])
        }
        "func" | "function" | "key" | "pred" | "predicate" => ["bool", "str", "abs"][rng.random_range(0..3)].to_owned(),
        _ if lower.starts_with("it") || lower.starts_with("seq") || lower.ends_with('s') || lower == "data" => {
            list(rng)
        }
        _ => match rng.random_range(0..3) {
            0 => rng.random_range(-3..10).to_string(),
            1 => format!("{:?}", WORDS[rng.random_range(0..WORDS.len())]),
            _ => list(rng),
        },
    }
}

fn list(rng: &mut ChaCha8Rng) -> String {
    let len = rng.random_range(0..6);
    let items: Vec<String> = if rng.random_bool(0.7) {
        (0..len).map(|_| rng.random_range(-3..10).to_string()).collect()
    } else {
        (0..len)
            .map(|_| format!("{:?}", WORDS[rng.random_range(0..WORDS.len())]))
            .collect()
    };
    format!("[{}]", items.join(", "))
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    const MODULE: &str = "import math\nfrom .sibling import helper\n\n\
def first(xs):\n    return xs[0] if xs else None\n\n\
def spread(*args):\n    return args\n\n\
def scale(n, factor=2):\n    return math.floor(n * factor)\n\n\
def gen(it):\n    yield from it\n";

    fn wheel(license: &str) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default();
        writer.start_file("toy-1.0.dist-info/METADATA", options).unwrap();
        write!(
            writer,
            "Metadata-Version: 2.1\nName: toy\n{license}\n\nA toy. License: MIT in prose.\n"
        )
        .unwrap();
        writer.start_file("toy/core.py", options).unwrap();
        writer.write_all(MODULE.as_bytes()).unwrap();
        writer.finish().unwrap().into_inner()
    }

    #[test]
    fn only_plain_positional_functions_become_programs() {
        let mut out = PypiPrograms::default();
        add_wheel("toy-1.0-py3-none-any.whl", &wheel("License: MIT"), 3, &mut out);
        assert_eq!(out.archives_used, 1);
        assert_eq!(out.functions_seen, 4);
        assert_eq!(out.programs.len(), 2, "{out:?}");
        let first = &out.programs[0].source;
        assert!(first.starts_with("import math\n"), "{first}");
        assert!(
            !first.contains("from .sibling"),
            "relative imports cannot run alone: {first}"
        );
        assert!(
            first.contains("def first(xs):") && first.contains("print(repr(first(["),
            "{first}"
        );
        let scale = &out.programs[1].source;
        assert!(
            scale.contains("def scale(n, factor=2):") && scale.contains("print(repr(scale("),
            "{scale}"
        );
        assert!(
            out.programs
                .iter()
                .all(|p| p.level == PYPI_LEVEL && !p.source.contains("spread("))
        );
    }

    #[test]
    fn classifiers_count_and_copyleft_is_skipped() {
        let mut out = PypiPrograms::default();
        add_wheel("gpl.whl", &wheel("License: GPL-3.0-or-later"), 3, &mut out);
        assert!(out.programs.is_empty());
        assert_eq!(out.notes.len(), 1);
        assert!(out.notes[0].contains("GPL-3.0-or-later"), "{:?}", out.notes);
        add_wheel(
            "bsd.whl",
            &wheel("Classifier: License :: OSI Approved :: BSD License"),
            3,
            &mut out,
        );
        assert_eq!(out.programs.len(), 2);
    }

    #[test]
    fn the_same_seed_gives_the_same_programs() {
        let build = |seed| {
            let mut out = PypiPrograms::default();
            add_wheel("toy.whl", &wheel("License: Apache-2.0"), seed, &mut out);
            out.programs
        };
        assert_eq!(build(5), build(5));
        let differs = (6..20).any(|seed| build(seed) != build(5));
        assert!(differs, "other seeds should draw other arguments");
    }

    #[test]
    fn a_folder_skips_sdists_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("toy-1.0-py3-none-any.whl"), wheel("License: ISC")).unwrap();
        std::fs::write(dir.path().join("toy-1.0.tar.gz"), b"not read").unwrap();
        let out = load_dir(dir.path(), 1).unwrap();
        assert_eq!(out.programs.len(), 2);
        assert_eq!(out.notes.len(), 1, "{:?}", out.notes);
        assert!(load_dir(&dir.path().join("missing"), 1).is_err());
    }
}
