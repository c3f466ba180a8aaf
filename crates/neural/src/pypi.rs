//! Real functions from permissively licensed wheels (downloaded with
//! `python3 -m pip download NAME --no-deps -d DIR`): every module of a wheel is read,
//! and each eligible top-level function becomes programs through [`super::real_code`],
//! with the helpers it needs copied in from the wheel's own modules (the package is not
//! installed in the sandbox) and arguments that make sense for its parameters.
//!
//! Deterministic: archives and their files are read in name order; see
//! [`super::real_code`] for the calls.

use std::collections::HashSet;
use std::io::{Cursor, Read};
use std::path::Path;

use super::real_code::module::Module;
use super::real_code::{self, Arguments, Harvest, Options, Origin};

/// Marks real-function programs in `programs.jsonl` (generated ones are levels 0..=MAX).
pub const PYPI_LEVEL: u8 = real_code::REAL_LEVEL;

#[derive(Debug, thiserror::Error)]
pub enum PypiError {
    #[error(
        "cannot read the package folder {path}: {source}; pass --pypi a folder made by `python3 -m pip download NAME --no-deps -d DIR`"
    )]
    Folder { path: String, source: std::io::Error },
}

/// Reads every `.whl` in `dir` (sdists are noted and skipped).
pub fn load_dir(dir: &Path, seed: u64, arguments: Arguments) -> Result<Harvest, PypiError> {
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
    let mut out = Harvest::new(Origin::Pypi);
    for path in names {
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if !has_extension(&name, "whl") {
            out.notes.push(format!("{name}: skipped (only wheels are read)"));
            continue;
        }
        match std::fs::read(&path) {
            Ok(bytes) => add_wheel(&name, &bytes, seed, arguments, &mut out),
            Err(e) => out.notes.push(format!("{name}: skipped (cannot read: {e})")),
        }
    }
    Ok(out)
}

/// Adds the eligible functions of one wheel, or a note saying why it was skipped.
pub fn add_wheel(name: &str, bytes: &[u8], seed: u64, arguments: Arguments, out: &mut Harvest) {
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
    let modules: Vec<Module> = files
        .iter()
        .filter(|(path, _)| has_extension(path, "py"))
        .filter_map(|(path, source)| Module::parse(path, source))
        .collect();
    // The wheel's own packages are copied in, not imported.
    let inline_packages: HashSet<String> = modules
        .iter()
        .map(|m| m.name.split('.').next().unwrap_or_default().to_owned())
        .collect();
    real_code::harvest(&modules, &Options::package(seed, arguments, inline_packages), out);
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

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    const MODULE: &str = "import math\nfrom .sibling import helper\n\n\
def first(xs):\n    return xs[0] if xs else None\n\n\
def spread(*args):\n    return args\n\n\
def scale(n, factor=2):\n    return math.floor(n * factor)\n\n\
def gen(it):\n    yield from it\n\n\
def assist(n):\n    return helper(n)\n";

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

    fn functions(out: &Harvest) -> Vec<&str> {
        let mut names: Vec<&str> = out.programs.iter().map(|p| p.function.as_str()).collect();
        names.dedup();
        names
    }

    #[test]
    fn functions_that_can_be_called_become_programs() {
        let mut out = Harvest::new(Origin::Pypi);
        add_wheel(
            "toy-1.0-py3-none-any.whl",
            &wheel("License: MIT"),
            3,
            Arguments::Inferred,
            &mut out,
        );
        assert_eq!(out.archives_used, 1);
        assert_eq!(out.functions_seen, 5);
        // `spread` has nothing to pass, `assist` needs a sibling module the wheel lacks.
        assert_eq!(
            functions(&out),
            ["toy.core:first", "toy.core:scale", "toy.core:gen"],
            "{out:?}"
        );
        let first = &out.programs[0].program.source;
        assert!(
            first.starts_with("def first(xs):"),
            "only the imports a function uses: {first}"
        );
        assert!(
            !first.contains("from .sibling"),
            "relative imports cannot run alone: {first}"
        );
        assert!(
            first.contains("def first(xs):") && first.contains("result = first(xs)"),
            "{first}"
        );
        let scale = out.programs.iter().find(|p| p.function.ends_with(":scale")).unwrap();
        assert!(
            scale.program.source.starts_with("import math\n"),
            "{}",
            scale.program.source
        );
        let generator = out.programs.iter().find(|p| p.function.ends_with(":gen")).unwrap();
        assert!(
            generator.program.source.contains("result = list(gen(it))"),
            "{}",
            generator.program.source
        );
        assert!(out.programs.iter().all(|p| p.program.level == PYPI_LEVEL));
    }

    #[test]
    fn classifiers_count_and_copyleft_is_skipped() {
        let mut out = Harvest::new(Origin::Pypi);
        add_wheel(
            "gpl.whl",
            &wheel("License: GPL-3.0-or-later"),
            3,
            Arguments::Inferred,
            &mut out,
        );
        assert!(out.programs.is_empty());
        assert_eq!(out.notes.len(), 1);
        assert!(out.notes[0].contains("GPL-3.0-or-later"), "{:?}", out.notes);
        add_wheel(
            "bsd.whl",
            &wheel("Classifier: License :: OSI Approved :: BSD License"),
            3,
            Arguments::Inferred,
            &mut out,
        );
        assert_eq!(functions(&out).len(), 3);
        let mut expression = Harvest::new(Origin::Pypi);
        add_wheel(
            "mit.whl",
            &wheel("License-Expression: MIT"),
            3,
            Arguments::Inferred,
            &mut expression,
        );
        assert_eq!(functions(&expression).len(), 3);
    }

    #[test]
    fn a_folder_skips_sdists_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("toy-1.0-py3-none-any.whl"), wheel("License: ISC")).unwrap();
        std::fs::write(dir.path().join("toy-1.0.tar.gz"), b"not read").unwrap();
        let out = load_dir(dir.path(), 1, Arguments::Inferred).unwrap();
        assert_eq!(functions(&out).len(), 3);
        assert_eq!(out.notes.len(), 1, "{:?}", out.notes);
        assert!(load_dir(&dir.path().join("missing"), 1, Arguments::Inferred).is_err());
    }
}
