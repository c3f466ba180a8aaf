//! The rule-based generator: the code to start from (the report's snippets, the
//! retrieved context, or a skeleton) with the edit actions applied in order; and the
//! same actions as tools over an LLM's draft.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::Regex;

use super::{Candidate, GenInput};
use crate::edits::{
    EditAction, append_observer, complete_imports, dedent, detach_project_imports, drive_context, fill_empty_blocks,
    fix_seeds, hoist_main_blocks, inferred_shape, migrate_deprecated, migrate_keras1, re, repair_indentation,
    run_on_cpu, show_warnings, shrink_loops, strip_notebook, synthesize_data, synthesize_datasets, synthesize_images,
    uncatch_reported,
};
use crate::report::looks_like_python;

/// The first candidate without a model: the report's code with the edit actions applied.
pub fn rule_candidate(input: &GenInput<'_>) -> Candidate {
    let (mut code, mut edits) = base_code(input);
    let facts = ReportFacts::of(input);
    let has_context = input.context.is_some();
    let actions: [&EditAction<'_>; 17] = [
        &|code| detach_project_imports(code, input.project_modules, input.project),
        &|code| if has_context { hoist_main_blocks(code) } else { None },
        &strip_notebook,
        &dedent,
        &repair_indentation,
        &|code| migrate_deprecated(code, &facts.words),
        &|code| migrate_keras1(code, &input.restructured.observed),
        &|code| run_on_cpu(code, &input.restructured.observed),
        &|code| synthesize_data(code, &facts.shape),
        &|code| synthesize_datasets(code, &input.restructured.observed),
        &|code| {
            let sizes = format!("{}\n{code}", facts.words);
            synthesize_images(code, &sizes, &input.restructured.observed)
        },
        &|code| shrink_loops(code, 100, 10_000),
        &|code| {
            input
                .context
                .and_then(|context| drive_context(code, &context.code, &facts.shape))
        },
        &complete_imports,
        &|code| show_warnings(code, input.restructured),
        &fix_seeds,
        &|code| append_observer(code, input.restructured),
    ];
    apply(&mut code, &mut edits, &actions);
    Candidate { code, edits }
}

/// An LLM's draft through the rules as tools: project imports the sandbox lacks detached,
/// notebook syntax and stray indentation removed, indentation slips repaired, deprecated and
/// Keras 1 APIs migrated, GPU code moved to the CPU, undefined data, dataset downloads
/// and image files made synthetic, loops shrunk, imports completed, seeds fixed, a handler of the reported
/// exception unwrapped. What the draft chose itself
/// (its output, how it drives the code) is left alone.
pub(crate) fn polish_draft(input: &GenInput<'_>, code: &mut String) -> Vec<String> {
    let facts = ReportFacts::of(input);
    let actions: [&EditAction<'_>; 16] = [
        &|code| detach_project_imports(code, input.project_modules, input.project),
        &|code| uncatch_reported(code, input.restructured),
        &strip_notebook,
        &dedent,
        &repair_indentation,
        &fill_empty_blocks,
        &|code| migrate_deprecated(code, &facts.words),
        &|code| migrate_keras1(code, &input.restructured.observed),
        &|code| run_on_cpu(code, &input.restructured.observed),
        &|code| synthesize_data(code, &facts.shape),
        &|code| synthesize_datasets(code, &input.restructured.observed),
        &|code| {
            let sizes = format!("{}\n{code}", facts.words);
            synthesize_images(code, &sizes, &input.restructured.observed)
        },
        &|code| shrink_loops(code, 100, 10_000),
        &complete_imports,
        &|code| show_warnings(code, input.restructured),
        &fix_seeds,
    ];
    let mut edits = Vec::new();
    apply(code, &mut edits, &actions);
    edits
}

/// Runs `actions` in order, recording the edit each one made.
fn apply(code: &mut String, edits: &mut Vec<String>, actions: &[&EditAction<'_>]) {
    for action in actions {
        if let Some(edit) = action(code) {
            edits.push(edit);
        }
    }
    // Synthetic data may need numpy/io/pandas imports the code did not have.
    if let Some(edit) = complete_imports(code) {
        edits.push(edit);
    }
}

/// What the edit actions read from the report: the data shape it implies and its words.
struct ReportFacts {
    shape: Vec<usize>,
    words: String,
}

impl ReportFacts {
    fn of(input: &GenInput<'_>) -> Self {
        let r = input.restructured;
        let shape = inferred_shape(&format!(
            "{}\n{}\n{}",
            r.problem,
            r.observed,
            input.report.environment.frameworks.join(" ")
        ));
        let words = format!("{}\n{}\n{}", r.problem, r.observed, input.report.text());
        Self { shape, words }
    }
}

/// Names `code` defines with `def` or `class`, at any depth.
fn definitions(code: &str) -> BTreeSet<String> {
    static DEF: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*(?:async\s+)?(?:def|class)\s+(\w+)"));
    DEF.captures_iter(code).map(|c| c[1].to_owned()).collect()
}

/// Names `code` defines with `def` or `class` at module level.
fn top_level_definitions(code: &str) -> BTreeSet<String> {
    code.lines()
        .filter_map(|line| TOP_LEVEL_DEF.captures(line).map(|c| c[1].to_owned()))
        .collect()
}

static TOP_LEVEL_DEF: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:async\s+)?(?:def|class)\s+(\w+)"));

/// The code to start from: the report's snippets, the context, or a skeleton.
fn base_code(input: &GenInput<'_>) -> (String, Vec<String>) {
    let mut edits = Vec::new();
    let snippets: Vec<String> = input
        .report
        .code()
        .iter()
        .filter(|s| looks_like_python(s) || input.report.snippets.contains(s))
        .map(|snippet| {
            let mut snippet = snippet.clone();
            edits.extend(dedent(&mut snippet));
            snippet
        })
        .collect();
    let joined = snippets.join("\n");
    let mut code = String::new();
    if let Some(context) = input.context {
        // The context is taken for what the snippets use and do not define themselves (the
        // project file is often the snippet), without a second copy of what they define.
        let in_snippets = definitions(&joined);
        let needed = definitions(&context.code)
            .difference(&in_snippets)
            .any(|name| Regex::new(&format!(r"\b{}\b", regex::escape(name))).is_ok_and(|r| r.is_match(&joined)));
        if snippets.is_empty() || needed {
            code.push_str(&without_blocks(
                &entry_last(&context.code),
                &top_level_definitions(&joined),
            ));
            code.push_str("\n\n");
            edits.push(format!(
                "took `{}` from {} (lines {}-{}) with its dependencies",
                context.name, context.path, context.start_line, context.end_line
            ));
        }
    }
    if !snippets.is_empty() {
        for snippet in &snippets {
            code.push_str(snippet);
            if !code.ends_with('\n') {
                code.push('\n');
            }
            code.push('\n');
        }
        edits.push(format!(
            "took the report's code ({} snippet{})",
            snippets.len(),
            if snippets.len() == 1 { "" } else { "s" }
        ));
    }
    if code.trim().is_empty() {
        let framework = input.restructured.framework.as_deref().unwrap_or("numpy");
        let import = match framework {
            "torch" => "import torch",
            "tensorflow" | "keras" => "import tensorflow as tf",
            _ => "import numpy as np",
        };
        let _ = write!(
            code,
            "# The report has no code and no project context: a skeleton to complete.\n{import}\n\n# Problem: {}\n",
            input.restructured.problem.lines().next().unwrap_or("")
        );
        edits.push(SKELETON_EDIT.to_owned());
    }
    (code, edits)
}

/// The edit that marks a script the rules could only sketch (see [`Candidate::is_skeleton`]).
pub(super) const SKELETON_EDIT: &str = "the report has no code: wrote a skeleton that cannot show the bug by itself";

/// `code` without its top-level `def`/`class` blocks (decorators included) named in `names`.
fn without_blocks(code: &str, names: &BTreeSet<String>) -> String {
    let mut out = String::new();
    let mut pending = String::new(); // decorators waiting for their definition
    let mut skipping = false;
    for line in code.split_inclusive('\n') {
        let top_level = !line.starts_with([' ', '\t']) && !line.trim().is_empty();
        if top_level {
            if line.starts_with('@') {
                pending.push_str(line);
                continue;
            }
            skipping = TOP_LEVEL_DEF.captures(line).is_some_and(|c| names.contains(&c[1]));
            if !skipping {
                out.push_str(&pending);
            }
            pending.clear();
        }
        if !skipping {
            out.push_str(line);
        }
    }
    out.push_str(&pending);
    out
}

/// A context lists its own file first, then the definitions it uses: when that file runs
/// code at module level, it goes last so the definitions exist when it runs.
fn entry_last(context_code: &str) -> String {
    let mut blocks: Vec<String> = Vec::new();
    for line in context_code.lines() {
        if (line.starts_with("# --- ") && line.ends_with(" ---")) || blocks.is_empty() {
            blocks.push(String::new());
        }
        if let Some(block) = blocks.last_mut() {
            block.push_str(line);
            block.push('\n');
        }
    }
    let runs_code = |block: &str| {
        block.lines().skip(1).any(|l| {
            !l.trim().is_empty()
                && !l.starts_with([' ', '\t', '#', '@', ')', ']', '}'])
                && !["def ", "class ", "import ", "from ", "async def "]
                    .iter()
                    .any(|k| l.starts_with(k))
        })
    };
    if blocks.len() < 2 || !runs_code(&blocks[0]) {
        return context_code.to_owned();
    }
    blocks.rotate_left(1);
    let mut out = blocks.concat();
    if !context_code.ends_with('\n') {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edits::OBSERVER_MARK;
    use crate::report::ParsedReport;
    use crate::restructure::restructure_rules;
    use replayground_shared::repro::{BugReport, RestructuredReport};

    fn input_for(report: &ParsedReport, restructured: &RestructuredReport) -> Candidate {
        rule_candidate(&GenInput::of_report(report, restructured))
    }

    #[test]
    fn snippets_get_their_missing_imports_and_seeds() {
        let report = ParsedReport::from(BugReport {
            observed: "ValueError: shapes (3,4) and (3,4) not aligned".into(),
            snippets: vec!["a = np.ones((3, 4))\nb = np.ones((3, 4))\nprint(np.dot(a, b))".into()],
            ..BugReport::default()
        });
        let c = input_for(&report, &restructure_rules(&report));
        assert!(c.code.starts_with("import numpy as np\n"), "{}", c.code);
        assert!(c.code.contains("np.random.seed(0)"));
        assert!(
            c.edits.iter().any(|e| e.contains("added missing imports")),
            "{:?}",
            c.edits
        );
        // A crash is its own evidence: no observer.
        assert!(!c.code.contains(OBSERVER_MARK));
    }

    #[test]
    fn notebooks_deprecations_and_data_files_are_handled() {
        let report = ParsedReport::from(BugReport {
            title: "loss becomes nan; X has shape (50, 3)".into(),
            snippets: vec![
                "!pip install numpy\n%matplotlib inline\nimport numpy as np\nX = np.load('data/train.npy')\ny = np.loadtxt(\"labels.csv\", delimiter=\",\")\nw = np.zeros(3, dtype=np.float)\nfor epoch in range(100000):\n    pass\ndisplay(X)\n".into(),
            ],
            ..BugReport::default()
        });
        let r = restructure_rules(&report);
        let c = input_for(&report, &r);
        assert!(
            !c.code.contains("!pip") && !c.code.contains("%matplotlib"),
            "{}",
            c.code
        );
        assert!(
            c.code.contains("np.random.default_rng(0).standard_normal((50, 3))"),
            "{}",
            c.code
        );
        assert!(!c.code.contains("train.npy") && !c.code.contains("labels.csv"));
        assert!(c.code.contains("dtype=float"));
        assert!(c.code.contains("range(10000)"));
        assert!(c.code.contains("print(X)"));
        assert!(c.code.contains(OBSERVER_MARK));
        assert!(crate::checks::structural(&c.code).passed, "{}", c.code);
        assert!(c.edits.len() >= 6, "{:?}", c.edits);
    }

    #[test]
    fn the_context_adds_only_what_the_snippets_do_not_define() {
        use replayground_shared::repro::{ChunkKind, RankedContext};
        let report = ParsedReport::from(BugReport {
            observed: "ValueError: bad shape".into(),
            snippets: vec!["def build():\n    return helper(2)\n\nprint(build())\n".into()],
            ..BugReport::default()
        });
        let restructured = restructure_rules(&report);
        let context = |code: &str| RankedContext {
            path: "model.py".into(),
            name: "build".into(),
            kind: ChunkKind::Function,
            start_line: 1,
            end_line: 3,
            score: 1.0,
            bm25: 1.0,
            dense: 1.0,
            rerank: None,
            training_loop: false,
            code: code.into(),
        };
        // The project file is the snippet (case 17): taken once.
        let same = context("# --- model.py ---\ndef build():\n    return helper(2)\n");
        let input = GenInput {
            context: Some(&same),
            ..GenInput::of_report(&report, &restructured)
        };
        let code = rule_candidate(&input).code;
        assert_eq!(code.matches("def build():").count(), 1, "{code}");
        // The project defines a helper the snippet uses: the helper comes, its `build` not.
        let helper =
            context("# --- model.py ---\n@cache\ndef build():\n    return helper(2)\n\ndef helper(n):\n    return n\n");
        let input = GenInput {
            context: Some(&helper),
            ..GenInput::of_report(&report, &restructured)
        };
        let code = rule_candidate(&input).code;
        assert_eq!(code.matches("def build():").count(), 1, "{code}");
        assert!(!code.contains("@cache"), "the decorator goes with its function: {code}");
        assert!(
            code.find("def helper").unwrap() < code.find("print(build())").unwrap(),
            "{code}"
        );
    }

    #[test]
    fn module_level_entry_code_goes_after_the_definitions_it_uses() {
        let context =
            "# --- main.py ---\nimport numpy as np\nm = Linear(3)\n\n# --- linear.py ---\nclass Linear:\n    pass\n";
        let code = entry_last(context);
        assert!(
            code.find("class Linear").unwrap() < code.find("m = Linear(3)").unwrap(),
            "{code}"
        );
        let defs_only = "# --- a.py ---\ndef f():\n    return g()\n\n# --- b.py ---\ndef g():\n    return 1\n";
        assert_eq!(entry_last(defs_only), defs_only);
    }
}
