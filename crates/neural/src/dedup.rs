//! Keeping CruxEval out of the training data.
//!
//! CruxEval is for evaluation only: no training program may be one of its functions or
//! a near-copy of one. Code is compared by the shingles (runs of 6 tokens) of its
//! token stream after canonical renaming: every identifier that is not a keyword or a
//! builtin becomes `v0`, `v1`, ... in order of first appearance, so renaming
//! variables, reformatting or editing comments does not hide a copy. A program is a
//! near-copy when it shares at least [`NEAR_COPY_CONTAINMENT`] of a CruxEval
//! function's shingles.

use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Share of a reference function's shingles that makes a program a near-copy.
pub const NEAR_COPY_CONTAINMENT: f64 = 0.6;
const SHINGLE: usize = 6;

const KEEP: &[&str] = &[
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
    "abs",
    "all",
    "any",
    "dict",
    "enumerate",
    "filter",
    "float",
    "int",
    "len",
    "list",
    "map",
    "max",
    "min",
    "print",
    "range",
    "reversed",
    "set",
    "sorted",
    "str",
    "sum",
    "tuple",
    "zip",
    "self",
];

/// Whether canonical renaming keeps `name` (a keyword or a common builtin).
pub(crate) fn is_kept_name(name: &str) -> bool {
    KEEP.contains(&name)
}

/// Python source as a canonical token stream.
pub fn canonical_tokens(source: &str) -> Vec<String> {
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    let chars: Vec<char> = source.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            // Keywords, builtins and attribute names (`xs.append`) carry meaning; other
            // names are the author's choice.
            let attribute = out.last().is_some_and(|t: &String| t == ".");
            if attribute || KEEP.contains(&word.as_str()) {
                out.push(word);
            } else {
                let next = names.len();
                let n = *names.entry(word).or_insert(next);
                out.push(format!("v{n}"));
            }
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == '"' || c == '\'' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(chars.len());
            out.push(chars[start..i].iter().collect());
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

fn shingles(tokens: &[String]) -> HashSet<u64> {
    use std::hash::{DefaultHasher, Hash, Hasher};
    tokens
        .windows(SHINGLE.min(tokens.len().max(1)))
        .map(|w| {
            let mut h = DefaultHasher::new();
            w.hash(&mut h);
            h.finish()
        })
        .collect()
}

/// The reference functions a corpus must stay away from.
#[derive(Debug, Default)]
pub struct Reference {
    functions: Vec<(String, HashSet<u64>)>,
    /// Shingle → functions that contain it, to compare only with candidates.
    index: HashMap<u64, Vec<u32>>,
}

/// A program judged too close to a reference function.
#[derive(Debug, Clone, PartialEq)]
pub struct NearCopy {
    pub id: String,
    pub containment: f64,
}

impl Reference {
    /// Loads CruxEval's `cruxeval.jsonl` (`{"code", "id", ...}` per line).
    pub fn load_cruxeval(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the CruxEval file {}: {e}", path.display()))?;
        let mut reference = Self::default();
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let record: serde_json::Value =
                serde_json::from_str(line).map_err(|e| format!("{}:{}: not JSON: {e}", path.display(), n + 1))?;
            let code = record["code"]
                .as_str()
                .ok_or_else(|| format!("{}:{}: no `code`", path.display(), n + 1))?;
            let id = record["id"]
                .as_str()
                .map_or_else(|| format!("line {}", n + 1), str::to_owned);
            reference.add(id, code);
        }
        Ok(reference)
    }

    pub fn add(&mut self, id: String, code: &str) {
        let set = shingles(&canonical_tokens(code));
        let k = self.functions.len() as u32;
        for &s in &set {
            self.index.entry(s).or_default().push(k);
        }
        self.functions.push((id, set));
    }

    pub fn len(&self) -> usize {
        self.functions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }

    /// The closest reference function, when `source` contains enough of it. Each
    /// top-level function and class of `source` is also renamed on its own, so a copy is
    /// caught wherever it stands (renaming numbers names in order of first appearance,
    /// so the code before a copy would otherwise shift its names).
    pub fn near_copy(&self, source: &str) -> Option<NearCopy> {
        let mut mine = shingles(&canonical_tokens(source));
        for (_, block) in top_level_blocks(source) {
            mine.extend(shingles(&canonical_tokens(&block)));
        }
        let mut shared: HashMap<u32, usize> = HashMap::new();
        for s in &mine {
            for &k in self.index.get(s).into_iter().flatten() {
                *shared.entry(k).or_default() += 1;
            }
        }
        shared
            .into_iter()
            .map(|(k, n)| {
                let (id, set) = &self.functions[k as usize];
                (id, n as f64 / set.len().max(1) as f64)
            })
            .filter(|&(_, c)| c >= NEAR_COPY_CONTAINMENT)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(id, containment)| NearCopy {
                id: id.clone(),
                containment,
            })
    }
}

/// The top-level `def` and `class` blocks of `source`, by name.
pub(crate) fn top_level_blocks(source: &str) -> Vec<(String, String)> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut open = false;
    for line in source.lines() {
        let starts_block = ["def ", "class ", "async def "]
            .iter()
            .find_map(|k| line.strip_prefix(k))
            .map(|rest| rest.split(['(', ':']).next().unwrap_or_default().trim().to_owned());
        if let Some(name) = starts_block {
            blocks.push((name, String::new()));
            open = true;
        } else if open && !line.is_empty() && !line.starts_with([' ', '\t', '#', '@']) {
            open = false;
        }
        if open && let Some((_, block)) = blocks.last_mut() {
            block.push_str(line);
            block.push('\n');
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::{Curriculum, generate};

    fn cruxeval() -> Option<Reference> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/cruxeval/cruxeval.jsonl");
        if path.is_file() {
            Some(Reference::load_cruxeval(&path).unwrap())
        } else {
            eprintln!(
                "SKIPPED against the real set: {} is missing; testing on a sample",
                path.display()
            );
            None
        }
    }

    const SAMPLE: &str = "def f(nums):\n    output = []\n    for n in nums:\n        output.append((nums.count(n), n))\n    output.sort(reverse=True)\n    return output";

    #[test]
    fn renamed_and_reformatted_copies_are_caught() {
        let mut reference = cruxeval().unwrap_or_default();
        reference.add("sample_0".into(), SAMPLE);
        let disguised = "def g(values):  # counts\n    res = []\n    for v in values:\n        res.append((values.count(v), v))\n    res.sort(reverse=True)\n    return res\n\nprint(g([1, 2]))\n";
        let hit = reference.near_copy(disguised).unwrap_or_else(|| {
            panic!(
                "a renamed copy is a near-copy:\n{:?}\n{:?}",
                canonical_tokens(SAMPLE),
                canonical_tokens(disguised)
            )
        });
        assert!(hit.containment > 0.9, "{hit:?}");
        assert!(reference.near_copy(SAMPLE).is_some());
        // After other code, whose names shift the numbering of the copy's own names.
        let buried = format!("import math\nlimit = math.floor(2.5)\nitems = [limit]\n\n{disguised}");
        let hit = reference
            .near_copy(&buried)
            .expect("a copy after other code is a near-copy");
        assert!(hit.containment > 0.9, "{hit:?}");
    }

    #[test]
    fn generated_programs_are_not_near_copies() {
        let Some(reference) = cruxeval() else { return };
        assert_eq!(reference.len(), 800);
        for seed in 0..200 {
            let program = generate(
                seed,
                Curriculum {
                    level: (seed % 5) as u8,
                },
            );
            assert_eq!(reference.near_copy(&program.source), None, "{}", program.source);
        }
    }

    #[test]
    fn canonical_tokens_ignore_names_comments_and_layout() {
        let a = canonical_tokens("x = y + 1  # note\n");
        let b = canonical_tokens("total=count+1\n");
        assert_eq!(canonical_tokens("xs.count(x)"), ["v0", ".", "count", "(", "v1", ")"]);
        assert_eq!(a, b);
        assert_eq!(a, ["v0", "=", "v1", "+", "1"]);
        assert_ne!(canonical_tokens("x = len(y)"), canonical_tokens("x = sum(y)"));
    }
}
