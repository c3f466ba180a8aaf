//! Edit action: reads of data files that are not here (`np.load`, `pd.read_csv`,
//! `open("x.csv")`) replaced with synthetic data of the shape the report implies.

use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::code::{UNSTATED_SHAPE, re, shape_literal};
use super::synthetic_frame::{HELPER, frame_call, helper_definition};

/// Synthetic data for one `np.load(...)`: the shape and dtype its line states (`dtype=int`,
/// a trailing `# (120, 8)` or `# digits 0..9`) win over the report-wide shape.
fn synthetic_array(call: &str, line_rest: &str, shape: &[usize]) -> String {
    static COMMENT_SHAPE: LazyLock<Regex> = LazyLock::new(|| re(r"#.*?\((\d+(?:\s*,\s*\d+)*)\s*,?\s*\)"));
    static RANGE: LazyLock<Regex> = LazyLock::new(|| re(r"\b(\d+)\s*(?:\.\.|-|to)\s*(\d+)\b"));
    static INTEGER: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?i)(?:dtype\s*=\s*(?:np\.)?u?int|\bu?int(?:8|16|32|64)?\b|\blabels?\b|\bclass(?:es)?\b|\bdigits?\b)")
    });
    let comment = line_rest.find('#').map_or("", |i| &line_rest[i..]);
    let stated: Option<Vec<usize>> = COMMENT_SHAPE.captures(comment).and_then(|c| {
        c[1].split(',')
            .map(|d| d.trim().parse::<usize>().ok().filter(|&d| d > 0 && d <= 100_000))
            .collect()
    });
    let hint = format!("{call} {comment}");
    let integer = INTEGER.is_match(&hint);
    let shape = stated.unwrap_or_else(|| {
        // Integer labels read from a file are one value per row.
        if integer {
            vec![shape.first().copied().unwrap_or(100)]
        } else {
            shape.to_vec()
        }
    });
    let literal = shape_literal(&shape);
    if hint.contains("uint8") {
        return format!("np.random.default_rng(0).integers(0, 256, {literal}).astype(np.uint8)");
    }
    if integer {
        let (low, high) = RANGE
            .captures(comment)
            .and_then(|c| Some((c[1].parse::<i64>().ok()?, c[2].parse::<i64>().ok()?)))
            .filter(|(low, high)| low < high)
            .unwrap_or((0, 9));
        return format!("np.random.default_rng(0).integers({low}, {}, {literal})", high + 1);
    }
    format!("np.random.default_rng(0).standard_normal({literal})")
}

/// Replaces reads of data files that are not here with synthetic data of the inferred shape.
pub(crate) fn synthesize_data(code: &mut String, shape: &[usize]) -> Option<String> {
    static NP_LOAD: LazyLock<Regex> = LazyLock::new(|| {
        re(r#"\b(?:np|numpy)\.(load|loadtxt|genfromtxt)\(\s*(?:r|f)?(['"])([^'"]+)['"][^()]*(?:\([^()]*\)[^()]*)*\)"#)
    });
    static READ_CSV: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"\b(?:pd|pandas)\.read_(csv|table|excel|parquet|json)\(\s*(?:r|f)?(['"])([^'"]+)['"][^()]*(?:\([^()]*\)[^()]*)*\)"#,
        )
    });
    static OPEN: LazyLock<Regex> = LazyLock::new(|| {
        re(r#"\bopen\(\s*(?:r|f)?(['"])([^'"]+\.(?:csv|txt|tsv|data|dat))['"]\s*(?:,\s*['"]r?t?['"]\s*)?\)"#)
    });
    static COLUMN: LazyLock<Regex> = LazyLock::new(|| re(r#"\[\s*['"]([A-Za-z_][\w ]*)['"]\s*\]"#));
    let mut replaced = Vec::new();
    let literal = shape_literal(shape);
    let available = |path: &str| path.starts_with("/usr/");
    let source = code.as_str();
    let new = NP_LOAD.replace_all(source, |c: &Captures<'_>| {
        if available(&c[3]) {
            return c[0].to_owned();
        }
        replaced.push(c[3].to_owned());
        let whole = c.get(0).expect("the whole match");
        let line_rest = source[whole.end()..].split('\n').next().unwrap_or("");
        synthetic_array(whole.as_str(), line_rest, shape)
    });
    let mut new = new.into_owned();
    let mut columns: Vec<String> = Vec::new();
    for c in COLUMN.captures_iter(&new) {
        if !columns.contains(&c[1].to_owned()) {
            columns.push(c[1].to_owned());
        }
    }
    if columns.is_empty() {
        columns = (0..shape.get(1).copied().unwrap_or(4))
            .map(|i| format!("f{i}"))
            .collect();
    }
    let rows = shape.first().copied().unwrap_or(100);
    let features = if shape.len() == 2 { shape[1] } else { UNSTATED_SHAPE[1] };
    let frame = format!(
        "pd.DataFrame(np.random.default_rng(0).standard_normal(({rows}, {})), columns={columns:?})",
        columns.len()
    );
    // A table gets the columns the code names, in the roles its uses give them.
    let mut tables = false;
    let before = new.clone();
    new = READ_CSV
        .replace_all(&before, |c: &Captures<'_>| {
            if available(&c[3]) {
                return c[0].to_owned();
            }
            replaced.push(c[3].to_owned());
            match frame_call(&before, &c[0], rows, features) {
                Some(call) => {
                    tables = true;
                    call
                }
                None => frame.clone(),
            }
        })
        .into_owned();
    if tables && !new.contains(&format!("def {HELPER}(")) {
        // After any `from __future__` import, which must come first.
        let at = new
            .match_indices("from __future__ import")
            .filter(|&(i, _)| i == 0 || new[..i].ends_with('\n'))
            .last()
            .map_or(0, |(i, _)| new[i..].find('\n').map_or(new.len(), |end| i + end + 1));
        new.insert_str(at, &helper_definition());
    }
    let cols = shape.get(1).copied().unwrap_or(4);
    let csv: String = (0..rows.min(200))
        .map(|r| {
            (0..cols)
                .map(|c| format!("{:.3}", ((r * 7 + c * 13) % 17) as f32 / 4.0))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join("\\n");
    new = OPEN
        .replace_all(&new, |c: &Captures<'_>| {
            if available(&c[2]) {
                return c[0].to_owned();
            }
            replaced.push(c[2].to_owned());
            format!("io.StringIO(\"{csv}\\n\")")
        })
        .into_owned();
    if replaced.is_empty() {
        return None;
    }
    *code = new;
    Some(format!(
        "replaced the data file(s) {} with synthetic data of shape {literal}",
        replaced.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edits::complete_imports;

    #[test]
    fn pandas_frames_keep_the_columns_the_code_uses() {
        let mut code = "df = pd.read_csv('train.csv')\ny = df['label']\n".to_owned();
        synthesize_data(&mut code, &[10, 2]).unwrap();
        assert!(
            code.contains(
                "df = _replayground_frame(10, [(\"f0\", \"feature\"), (\"f1\", \"feature\"), (\"label\", \"label\")])"
            ),
            "{code}"
        );
        assert!(code.starts_with("def _replayground_frame(rows, columns):"), "{code}");
        // A second pass defines the helper once.
        let again = code.replace(
            "_replayground_frame(10, [(\"f0\", \"feature\"), (\"f1\", \"feature\"), (\"label\", \"label\")])",
            "pd.read_csv('more.csv')",
        );
        let mut again = format!("{again}\nz = pd.read_csv('more.csv')\n");
        synthesize_data(&mut again, &[10, 2]).unwrap();
        assert_eq!(again.matches("def _replayground_frame").count(), 1, "{again}");
        let mut future = "from __future__ import annotations\ndf = pd.read_csv('t.csv')\ny = df['label']\n".to_owned();
        synthesize_data(&mut future, &[10, 2]).unwrap();
        assert!(
            future.starts_with("from __future__ import annotations\ndef _replayground_frame("),
            "{future}"
        );
        assert_eq!(
            complete_imports(&mut code),
            None,
            "the helper imports what it uses: {code}"
        );
    }

    #[test]
    fn synthetic_data_follows_the_shapes_and_dtypes_a_line_states() {
        let mut code = "X = np.load(\"f.npy\")   # (120, 8)\ny = np.load(\"t.npy\")  # (120,)\nl = np.loadtxt(\"l.txt\", dtype=int)  # digits 0..9\ni = np.load(\"i.npy\")  # (5, 28, 28) uint8\n".to_owned();
        synthesize_data(&mut code, &[100, 4]).unwrap();
        assert!(code.contains("standard_normal((120, 8))"), "{code}");
        assert!(code.contains("standard_normal((120,))"), "{code}");
        assert!(code.contains("integers(0, 10, (100,))"), "{code}");
        assert!(
            code.contains("integers(0, 256, (5, 28, 28)).astype(np.uint8)"),
            "{code}"
        );
    }
}
