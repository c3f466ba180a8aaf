//! Real functions from the standard library (PSF licence): the pure-Python modules of
//! the sandbox's own Python whose functions are deterministic, each function copied
//! into a program with what it needs (so the trace steps through its lines like user
//! code, even where the module is C-accelerated on import) and called with arguments
//! that make sense for its parameters, through [`super::real_code`].

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::real_code::arguments::{Kind, Text};
use super::real_code::module::Module;
use super::real_code::{self, Arguments, Harvest, Options, Origin};

/// The modules read, as paths under the standard library's folder. Left out: modules
/// that do I/O, depend on the locale or the clock, or whose functions are thin wrappers
/// of C code.
pub const MODULES: &[&str] = &[
    "base64.py",
    "bisect.py",
    "calendar.py",
    "colorsys.py",
    "copy.py",
    "datetime.py",
    "difflib.py",
    "fnmatch.py",
    "functools.py",
    "glob.py",
    "heapq.py",
    "html/__init__.py",
    "json/encoder.py",
    "ntpath.py",
    "posixpath.py",
    "quopri.py",
    "shlex.py",
    "statistics.py",
    "string.py",
    "textwrap.py",
    "token.py",
    "urllib/parse.py",
];

#[derive(Debug, thiserror::Error)]
pub enum StdlibError {
    #[error(
        "{dir} holds none of the standard library's modules ({first}, ...); pass --stdlib the folder of the sandbox Python's standard library (python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"stdlib\"])')"
    )]
    NotStdlib { dir: String, first: &'static str },
}

/// The standard library of `python`, as it reports it; `None` when it cannot say.
pub fn locate(python: &Path) -> Option<PathBuf> {
    let output = std::process::Command::new(python)
        .args(["-I", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"])
        .output()
        .ok()?;
    let dir = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    (output.status.success() && dir.is_dir()).then_some(dir)
}

/// Reads [`MODULES`] from `dir` (modules missing there are noted).
pub fn load_dir(dir: &Path, seed: u64, arguments: Arguments) -> Result<Harvest, StdlibError> {
    let mut out = Harvest::new(Origin::Stdlib);
    let mut modules = Vec::new();
    for path in MODULES {
        match std::fs::read_to_string(dir.join(path)) {
            Ok(source) => match Module::parse(path, &source) {
                Some(module) => modules.push(module),
                None => out.notes.push(format!("{path}: skipped (does not parse)")),
            },
            Err(e) => out.notes.push(format!("{path}: skipped ({e})")),
        }
    }
    if modules.is_empty() {
        return Err(StdlibError::NotStdlib {
            dir: dir.display().to_string(),
            first: MODULES[0],
        });
    }
    out.archives_used = modules.len() as u64;
    harvest(&modules, seed, arguments, &mut out);
    Ok(out)
}

/// Adds the programs of `modules` (standard-library modules, imports kept as imports).
pub fn harvest(modules: &[Module], seed: u64, arguments: Arguments, out: &mut Harvest) {
    let options = Options {
        seed,
        arguments,
        inline_packages: HashSet::new(),
        hint: &hint,
        skip: &skip,
    };
    real_code::harvest(modules, &options, out);
}

/// What a parameter takes where its name alone would mislead.
fn hint(module: &str, _function: &str, param: &str) -> Option<Kind> {
    let list = |item: Kind, sorted| Kind::List {
        item: Box::new(item),
        sorted,
    };
    let int = |lo, hi| Kind::Int { lo, hi };
    let kind = match (module, param) {
        // "All inputs and outputs are triples of floats in the range [0.0...1.0]".
        ("colorsys", _) => Kind::Float { lo: 0.0, hi: 1.0 },
        ("posixpath" | "ntpath" | "glob", "s" | "p" | "a" | "path" | "pathname" | "b") | ("fnmatch", "name") => {
            Kind::Text(Text::Path)
        }
        ("posixpath" | "ntpath", "paths") => list(Kind::Text(Text::Path), false),
        ("shlex", "s") => Kind::Text(Text::Sentence),
        ("shlex", "split_command") | ("difflib", "a" | "b") => list(Kind::Text(Text::Word), false),
        ("textwrap", "width") => int(6, 20),
        ("base64" | "quopri", "s" | "b") => Kind::Bytes,
        ("urllib.parse", "url" | "urlstring" | "string" | "qs" | "netloc" | "host" | "hostname" | "user" | "attr") => {
            Kind::Text(Text::Url)
        }
        ("functools", "function") => Kind::Callable { arity: 2 },
        ("datetime", "second" | "minute") => int(0, 59),
        ("datetime", "microsecond") => int(0, 999_999),
        ("datetime", "fold") => int(0, 1),
        ("heapq", "x") => list(int(0, 30), false),
        ("heapq" | "bisect", "a") => list(int(0, 30), true),
        ("heapq", "startpos") => int(0, 0),
        ("statistics", "data" | "x" | "y") => list(int(1, 30), false),
        ("calendar" | "datetime", "m") => int(1, 12),
        ("calendar" | "datetime", "y" | "y1" | "y2" | "year") => int(1900, 2100),
        ("calendar" | "datetime", "d") => int(1, 28),
        _ => return None,
    };
    Some(kind)
}

/// Functions that read the machine, print, or only make sense inside their module.
fn skip(module: &str, function: &str) -> bool {
    let names: HashSet<&str> = [
        "main",
        "test",
        "encode",
        "decode",
        "abspath",
        "realpath",
        "relpath",
        "expanduser",
        "expandvars",
        "ismount",
        "islink",
        "lexists",
        "exists",
        "isdir",
        "isfile",
        "glob",
        "iglob",
        "glob0",
        "glob1",
        "copy",
        "deepcopy",
        "update_wrapper",
        "wraps",
        "total_ordering",
        "lru_cache",
        "cache",
        "singledispatch",
        "recursive_repr",
        "setfirstweekday",
        "format",
        "formatstring",
        "prcal",
        "prmonth",
        "timegm",
        "clear_cache",
        "call",
        "length_hint",
        // Private helpers that take a regex match, a class or a lexer.
        "_replace_charref",
        "_print_tokens",
        "_coerce",
        "_convert",
        "_byte_quoter_factory",
    ]
    .into_iter()
    .collect();
    names.contains(function) || (module == "functools" && function.starts_with('_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAPQ: &str = r#""""Heap queue algorithm (a.k.a. priority queue)."""

__all__ = ['heappush']

def heappush(heap, item):
    """Push item onto heap, maintaining the heap invariant."""
    heap.append(item)
    _siftdown(heap, 0, len(heap)-1)

def _siftdown(heap, startpos, pos):
    newitem = heap[pos]
    while pos > startpos:
        parentpos = (pos - 1) >> 1
        parent = heap[parentpos]
        if newitem < parent:
            heap[pos] = parent
            pos = parentpos
            continue
        break
    heap[pos] = newitem

def now_ish(n):
    import time
    return time.time() + n

try:
    from _heapq import *
except ImportError:
    pass
"#;

    #[test]
    fn functions_are_copied_with_their_helpers_and_called_sensibly() {
        let module = Module::parse("heapq.py", HEAPQ).unwrap();
        let mut out = Harvest::new(Origin::Stdlib);
        harvest(&[module], 7, Arguments::Inferred, &mut out);
        assert_eq!(out.functions_seen, 3);
        // `now_ish` reads the clock.
        assert_eq!(out.functions_eligible, 2, "{:?}", out.programs);
        let push: Vec<&str> = out
            .programs
            .iter()
            .filter(|p| p.function == "heapq:heappush")
            .map(|p| p.program.source.as_str())
            .collect();
        assert!(!push.is_empty());
        for source in push {
            // The helper comes first, then the function, then the call; not the C import.
            let helper = source.find("def _siftdown(").expect(source);
            let function = source.find("def heappush(").expect(source);
            assert!(helper < function, "{source}");
            assert!(!source.contains("_heapq") && !source.contains("__all__"), "{source}");
            assert!(source.contains("heap = ["), "a heap is a list: {source}");
            assert!(source.contains("result = heappush(heap, "), "{source}");
            let heap: Vec<i64> = source
                .lines()
                .find_map(|l| l.strip_prefix("heap = ["))
                .unwrap()
                .trim_end_matches(']')
                .split(", ")
                .map(|n| n.parse().unwrap())
                .collect();
            assert!(heap.is_sorted(), "a sorted list is a valid heap: {heap:?}");
        }
        assert!(out.programs.iter().all(|p| p.origin == Origin::Stdlib));
    }

    #[test]
    fn the_machines_standard_library_gives_programs() {
        let Some(dir) = locate(Path::new("/usr/bin/python3")) else {
            eprintln!("SKIPPED: /usr/bin/python3 cannot say where its standard library is");
            return;
        };
        let out = load_dir(&dir, 1, Arguments::Inferred).unwrap();
        assert!(out.archives_used >= 20, "{:?}", out.notes);
        assert!(out.functions_eligible >= 80, "{} eligible", out.functions_eligible);
        let colorsys = out
            .programs
            .iter()
            .find(|p| p.function == "colorsys:rgb_to_hsv")
            .expect("rgb_to_hsv is eligible");
        assert!(
            colorsys.program.source.contains("result = rgb_to_hsv(0."),
            "{}",
            colorsys.program.source
        );
        assert!(load_dir(Path::new("/nonexistent"), 1, Arguments::Inferred).is_err());
    }
}
