//! A tool every LLM draft goes through before it runs: the names ruff finds undefined.
//!
//! Small models keep names the report never defines (a `learn_rate`, a layer class used
//! without its import, a helper from the reporter's other files), and a rewrite of the
//! whole script rarely fixes them: the model copies the report's lines again. So each
//! such name is resolved on its own, in the cheapest way that works:
//!
//! 1. a name the script defines under another case (`lr_model` for `LR_model`) is renamed;
//! 2. the rules' definitions: the usual import, the project's own definition, synthetic
//!    data for a data-like name;
//! 3. the LLM, asked one short question per name (the script's imports and the lines that
//!    use it, not the whole script: a second or two each with the prompt cache) and given
//!    the start of its answer (`from ` for a class-like name, `name = ` else); only a line
//!    that binds the name is kept, put before the first statement that uses it.

use std::fmt::Write as _;

use super::GenInput;
use super::llm::extract_code;
use crate::checks::RuffDiagnostic;
use crate::edits::{
    add_imports, bound_before_use, define_undefined, defines, defines_at_module_level, first_use_statement,
    strip_strings, value_reads, word,
};
use crate::llm::{ChatMessage, GenParams, Llm, LlmError, LlmTask};
use replayground_exec::sandbox::BoxFuture;

/// Tries import lines where the script will run, so that an import the LLM made up (a
/// reporter's own class "imported" from `torch.nn`) never reaches a candidate.
pub trait ImportProbe: Send + Sync {
    /// For each line, whether it runs without an error; `None` when the probe itself could
    /// not run (the lines are then kept).
    fn imports<'a>(&'a self, lines: &'a [String]) -> BoxFuture<'a, Option<Vec<bool>>>;
}

/// The names ruff reports undefined (F821), each once, in order of first report.
pub fn undefined_names(diagnostics: &[RuffDiagnostic]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in diagnostics
        .iter()
        .filter(|d| d.code.as_deref() == Some("F821"))
        .filter_map(|d| d.message.split('`').nth(1))
    {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    names
}

/// Lines of a script shown to the LLM per undefined name.
const USES_PER_NAME: usize = 3;

/// Resolves `names` (undefined in `code`) as the module says; returns the edits made.
/// An LLM error leaves the names the rules could not define as they were.
pub async fn resolve_undefined(
    llm: &dyn Llm,
    input: &GenInput<'_>,
    code: &mut String,
    names: &[String],
    seed: u64,
    probe: Option<&dyn ImportProbe>,
) -> (Vec<String>, Option<LlmError>) {
    let mut edits: Vec<String> = names
        .iter()
        .filter_map(|name| rename_case_variant(code, name).or_else(|| copy_later_definition(code, name)))
        .collect();
    // A renamed name is no longer used.
    let left: Vec<String> = names
        .iter()
        .filter(|name| !bound_before_use(code, name) && !uses(code, name).is_empty())
        .cloned()
        .collect();
    let report = input.report_text();
    // A class-like name (`Input`, `LeakyReLU`) is an import or the project's class, never
    // data, whatever the rules' data names say (`input`).
    let (classes, values): (Vec<String>, Vec<String>) = left.iter().cloned().partition(|n| looks_like_class(n));
    edits.extend(define_undefined(code, &values, input.project, Some(&report)));
    // A dataset class the report leaves out takes the samples the report states for it.
    let (datasets, classes): (Vec<String>, Vec<String>) = classes.into_iter().partition(|n| n.ends_with("Dataset"));
    edits.extend(define_undefined(code, &datasets, input.project, Some(&report)));
    edits.extend(define_undefined(code, &classes, input.project, None));
    let left: Vec<String> = left.into_iter().filter(|name| !bound_before_use(code, name)).collect();
    if left.is_empty() {
        return (edits, None);
    }
    let mut blocks: Vec<(String, Ask, String)> = Vec::new();
    for name in left.iter().take(MAX_ASKED) {
        let ask = if looks_like_class(name) || used_as_function(code, name) {
            Ask::Import
        } else if used_as_module(code, name) {
            Ask::Module
        } else {
            Ask::Value
        };
        match ask_definition(llm, code, name, ask, seed).await {
            Ok(Some(block)) => blocks.push((name.clone(), ask, block)),
            Ok(None) => {}
            Err(e) => return (edits, Some(e)),
        }
    }
    // An import that does not run was made up: a class-like name is then the reporter's
    // own class, a called one the reporter's own function; a module-like one is left to
    // the next rewrite.
    let imports: Vec<String> = blocks
        .iter()
        .filter(|(_, _, b)| is_import(b))
        .map(|(_, _, b)| b.clone())
        .collect();
    if let (Some(probe), false) = (probe, imports.is_empty())
        && let Some(works) = probe.imports(&imports).await
    {
        let failed: Vec<&String> = imports
            .iter()
            .zip(&works)
            .filter(|(_, ok)| !**ok)
            .map(|(b, _)| b)
            .collect();
        for (name, ask, block) in &mut blocks {
            if failed.contains(&&*block) {
                tracing::debug!(%block, "the LLM's import does not run");
                block.clear();
                if *ask == Ask::Import {
                    let own = if looks_like_class(name) {
                        Ask::Class
                    } else {
                        Ask::Function
                    };
                    match ask_definition(llm, code, name, own, seed).await {
                        Ok(Some(class)) => *block = class,
                        Ok(None) => {}
                        Err(e) => return (edits, Some(e)),
                    }
                }
            }
        }
        blocks.retain(|(_, _, b)| !b.is_empty());
    }
    let blocks: Vec<String> = blocks.into_iter().map(|(_, _, b)| b).collect();
    let before = code.clone();
    if let Some(edit) = insert_definitions(code, &blocks, &llm.name()) {
        if crate::checks::structural(code).passed {
            edits.push(edit);
        } else {
            *code = before;
        }
    }
    (edits, None)
}

/// Names one candidate asks the LLM about (each is a short answer of a few seconds).
const MAX_ASKED: usize = 6;

/// Renames `name` to the one name the script defines at module level that differs from
/// it in case only; the edit made, if any. A class-like name (`Model`) is never renamed
/// to a variable (`model`), nor any name to the one its own value is assigned to
/// (`model = Model(...)` would become `model = model(...)`): those are a class the script
/// forgot to import, not a typo.
fn rename_case_variant(code: &mut String, name: &str) -> Option<String> {
    let lower = name.to_lowercase();
    let pattern = crate::edits::re(r"(?m)^(?:class|def)\s+(\w+)|^(\w+)\s*(?::[^=\n]*)?=[^=]");
    let mut defined: Vec<(String, bool)> = pattern
        .captures_iter(code)
        .filter_map(|c| match (c.get(1), c.get(2)) {
            (Some(definition), _) => Some((definition.as_str().to_owned(), false)),
            (None, Some(variable)) => Some((variable.as_str().to_owned(), true)),
            _ => None,
        })
        .filter(|(d, _)| d != name && d.to_lowercase() == lower)
        .collect();
    defined.sort();
    defined.dedup_by(|a, b| a.0 == b.0);
    let [(target, is_variable)] = defined.as_slice() else {
        return None;
    };
    let word = word(name);
    let assigns_its_use = crate::edits::re(&format!(r"(?m)^\s*{}\s*(?::[^=\n]*)?=[^=]", regex::escape(target)));
    let self_reference = code
        .lines()
        .any(|line| assigns_its_use.is_match(line) && value_reads(line, &word));
    if (*is_variable && looks_like_class(name)) || self_reference {
        return None;
    }
    *code = word.replace_all(code, target.as_str()).into_owned();
    Some(format!("renamed `{name}` to `{target}`, the name the script defines"))
}

/// Puts a copy of the first one-line module-level assignment of `name` that comes after
/// its first use before that use: small models append the data a report's code needs
/// after the code (`x = x.reshape(…)` … `x = np.random.rand(…)`). The later assignment
/// stays, so the script's later lines see what they saw before. The edit made, if any.
fn copy_later_definition(code: &mut String, name: &str) -> Option<String> {
    let use_at = first_use_statement(code, name)?;
    let n = regex::escape(name);
    let assignment = crate::edits::re(&format!(
        r"(?m)^(?:{n}|[\w\s,]*,\s*{n}|{n}\s*,[\w\s,]*)\s*(?::[^=\n]*)?=[^=\n][^\n]*$"
    ));
    let line = assignment
        .find_iter(code)
        .filter(|m| m.start() > use_at)
        .map(|m| m.as_str().trim_end().to_owned())
        .find(|line| {
            let balanced = line.matches(['(', '[', '{']).count() == line.matches([')', ']', '}']).count();
            // Not one that needs the name itself (`x = x.reshape(…)`).
            let value = line.split_once('=').map_or("", |(_, value)| value);
            balanced && uses(value, name).is_empty()
        })?;
    code.insert_str(use_at, &format!("{line}\n"));
    Some(format!(
        "copied `{line}` before the first use of `{name}`, which came after it"
    ))
}

/// What the LLM is asked to write for one name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    /// The import of a library class or function (a class-like name).
    Import,
    /// The import of a module (a name only ever used as `name.attribute`).
    Module,
    /// A one-line value.
    Value,
    /// A minimal class of the reporter's own, when no import of it runs.
    Class,
    /// A minimal function of the reporter's own, for a called name no import provides.
    Function,
}

/// One LLM answer for `name`: the block of it that binds the name, if any.
async fn ask_definition(
    llm: &dyn Llm,
    code: &str,
    name: &str,
    ask: Ask,
    seed: u64,
) -> Result<Option<String>, LlmError> {
    let (messages, prefill) = definition_messages(code, name, ask);
    let params = GenParams {
        seed,
        ..GenParams::new(
            LlmTask::Define,
            if matches!(ask, Ask::Class | Ask::Function) {
                160
            } else {
                48
            },
        )
    };
    let answer = llm.complete(&messages, &params, &mut |_| {}).await?;
    let answer = if answer.trim_start().starts_with("```") {
        answer
    } else {
        format!("{prefill}{answer}")
    };
    let kept = binding_blocks(&extract_code(&answer), &[name.to_owned()]);
    tracing::debug!(%answer, kept = kept.len(), ?ask, "the LLM's definition of an undefined name");
    let wanted = |block: &String| match ask {
        Ask::Import | Ask::Module => is_import(block),
        Ask::Class | Ask::Function => !is_import(block),
        // `tqdm = 1` for a name the script calls, or `loader = 1` for one it loops over,
        // only trades a NameError for a TypeError.
        Ask::Value => !(is_bare_literal(block) && used_as_object(code, name)),
    };
    Ok(kept.into_iter().find(wanted))
}

/// Whether a block is an import line.
fn is_import(block: &str) -> bool {
    block.starts_with("import ") || block.starts_with("from ")
}

/// The question about one name: the script's imports, the lines that use it, and what
/// to write; with the start of the answer, given to the model (`from `, `name = ` or
/// `class Name`).
fn definition_messages(code: &str, name: &str, ask: Ask) -> (Vec<ChatMessage>, String) {
    let mut user = String::from("A Python script that reproduces a bug has these imports:\n```python\n");
    for line in code.lines().filter(|l| is_import(l)) {
        let _ = writeln!(user, "{line}");
    }
    let _ = writeln!(user, "```\nIt uses `{name}` but never defines or imports it:");
    for (number, line) in uses(code, name).into_iter().take(USES_PER_NAME) {
        let _ = writeln!(user, "    line {number}: {}", line.trim());
    }
    let (what, prefill) = match ask {
        Ask::Import => (
            format!("Write the import line that provides `{name}` from the library it belongs to."),
            "```python\nfrom ".to_owned(),
        ),
        Ask::Module => (
            format!("Write the import line that binds `{name}` to the module it stands for."),
            "```python\nimport ".to_owned(),
        ),
        Ask::Value => (
            format!(
                "Write the one line that defines `{name}` with a value that fits how the lines above use it \
                 (a small number, a device, small synthetic data of the right shape, a lambda)."
            ),
            format!("```python\n{name} = "),
        ),
        Ask::Class => (
            format!(
                "No installed library has `{name}`: it is the reporter's own class. Write a minimal definition \
                 of it that fits how the lines above use it (its constructor's arguments, what it returns)."
            ),
            format!("```python\nclass {name}"),
        ),
        Ask::Function => (
            format!(
                "No installed library has `{name}`: it is the reporter's own function. Write a minimal definition \
                 of it that fits how the lines above call it (its arguments, what it returns)."
            ),
            format!("```python\ndef {name}("),
        ),
    };
    let _ = write!(user, "\n{what} Write nothing else.");
    let messages = vec![
        ChatMessage::system(
            "You complete Python scripts (task: define). Answer with one ```python code block holding only \
             the definition asked for.",
        ),
        ChatMessage::user(user),
        ChatMessage::assistant(prefill.clone()),
    ];
    (messages, prefill)
}

/// Whether every use of `name` reads an attribute of it (`pytorch.tensor(…)`): a module.
fn used_as_module(code: &str, name: &str) -> bool {
    every_use_is(code, name, r"\b{n}\.\w")
}

/// Whether `name` is used at all and every use matches `pattern` (`{n}` stands for the
/// escaped name), outside strings and comments.
fn every_use_is(code: &str, name: &str, pattern: &str) -> bool {
    let code = strip_strings(code);
    let n = regex::escape(name);
    let uses = crate::edits::re(&format!(r"\b{n}\b")).find_iter(&code).count();
    let matching = crate::edits::re(&pattern.replace("{n}", &n)).find_iter(&code).count();
    uses > 0 && uses == matching
}

/// Whether the script only ever calls `name` (`tqdm(loader)`, `train_test_split(x, y)`):
/// a function, which an import provides or the reporter wrote.
fn used_as_function(code: &str, name: &str) -> bool {
    every_use_is(code, name, r"(?:^|[^.\w]){n}\s*\(")
}

/// Whether the script calls `name`, loops over it, indexes it or reads its attributes: no
/// number or string can stand for it.
fn used_as_object(code: &str, name: &str) -> bool {
    let code = strip_strings(code);
    let n = regex::escape(name);
    crate::edits::re(&format!(
        r"(?:^|[^.\w]){n}\s*[(\[.]|\bin\s+{n}\b\s*(?::|\))|\bin\s+\w+\(\s*{n}\b"
    ))
    .is_match(&code)
}

/// Whether a definition block assigns a bare number, string, bool or `None`.
fn is_bare_literal(block: &str) -> bool {
    block.split_once('=').is_some_and(|(_, value)| {
        crate::edits::re(r#"^\s*(?:-?[\d.]+(?:e-?\d+)?|True|False|None|'[^']*'|"[^"]*")\s*$"#).is_match(value)
    })
}

/// Whether `name` is written like a class (`Input`, `Conv2D`, `TransitionLayer`; not `X`,
/// `X_train` or `N_FEATURES`).
fn looks_like_class(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.chars().any(|c| c.is_ascii_lowercase())
        && !name.contains('_')
}

/// The 1-based numbers and text of the lines that use `name` outside strings and comments.
fn uses<'a>(code: &'a str, name: &str) -> Vec<(usize, &'a str)> {
    let word = word(name);
    code.lines()
        .enumerate()
        .filter(|(_, line)| word.is_match(&strip_strings(line)))
        .map(|(i, line)| (i + 1, line))
        .collect()
}

/// The top-level blocks of `answer` (a statement at column 0 with its indented lines)
/// that bind one of `names`: imports, assignments, `def`s and `class`es; nothing else.
fn binding_blocks(answer: &str, names: &[String]) -> Vec<String> {
    let mut blocks: Vec<String> = Vec::new();
    for line in answer.lines() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        match blocks.last_mut() {
            Some(block) if line.starts_with([' ', '\t', ')', ']', '}']) => {
                block.push('\n');
                block.push_str(line);
            }
            _ => blocks.push(line.to_owned()),
        }
    }
    let mut kept: Vec<String> = Vec::new();
    for block in blocks {
        let binds = names.iter().any(|n| defines_at_module_level(&block, n));
        let new = !kept.contains(&block);
        let is_definition = ["import ", "from ", "def ", "class "]
            .iter()
            .any(|k| block.starts_with(k))
            || crate::edits::re(r"^[\w\s,]+(?::[^=\n]*)?=[^=]").is_match(&block);
        if binds && new && is_definition && crate::checks::structural(&block).passed {
            kept.push(block);
        }
    }
    kept
}

/// Puts `blocks` into `code`: imports at the top, each definition before the first
/// top-level statement that uses the name it binds. The edit made, naming the lines.
fn insert_definitions(code: &mut String, blocks: &[String], llm: &str) -> Option<String> {
    if blocks.is_empty() {
        return None;
    }
    let (imports, definitions): (Vec<&String>, Vec<&String>) = blocks.iter().partition(|b| is_import(b));
    for definition in &definitions {
        let names = bound_names(definition);
        let at = names
            .iter()
            .filter_map(|n| first_use_statement(code, n))
            .min()
            .unwrap_or(code.len());
        let mut text = format!("{}\n", definition.trim_end());
        if at > 0 && !code[..at].ends_with('\n') {
            text.insert(0, '\n');
        }
        code.insert_str(at, &text);
    }
    let imports: Vec<&str> = imports.iter().map(|b| b.as_str()).collect();
    add_imports(code, &imports);
    let shown: Vec<String> = blocks
        .iter()
        .map(|b| b.lines().next().unwrap_or("").to_owned())
        .collect();
    Some(format!(
        "{llm} defined the names the script used undefined: {}",
        shown.join("; ")
    ))
}

/// The names a definition block binds at its top (`a, b = …`, `def f`, `class C`).
fn bound_names(block: &str) -> Vec<String> {
    let head = block.lines().next().unwrap_or("");
    let target = crate::edits::re(r"^(?:def|class)\s+(\w+)|^([\w\s,]+?)\s*(?::[^=\n]*)?=[^=]");
    let Some(c) = target.captures(head) else {
        return Vec::new();
    };
    match (c.get(1), c.get(2)) {
        (Some(name), _) => vec![name.as_str().to_owned()],
        (None, Some(targets)) => targets
            .as_str()
            .split(',')
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty() && defines(block, t))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{ScriptedLlm, ScriptedReply};
    use crate::report::ParsedReport;
    use crate::restructure::restructure_rules;
    use replayground_shared::repro::BugReport;

    fn diagnostic(name: &str) -> RuffDiagnostic {
        serde_json::from_value(serde_json::json!({
            "code": "F821",
            "message": format!("Undefined name `{name}`"),
            "location": {"row": 1, "column": 1},
        }))
        .unwrap()
    }

    #[test]
    fn undefined_names_come_once_each_in_order() {
        let d = [diagnostic("b"), diagnostic("a"), diagnostic("b")];
        assert_eq!(undefined_names(&d), ["b", "a"]);
    }

    #[test]
    fn a_name_defined_under_another_case_is_renamed() {
        let mut code = "LR_model = LR()\ny = lr_model(x)\nprint('lr_model')\n".to_owned();
        let edit = rename_case_variant(&mut code, "lr_model").unwrap();
        assert!(edit.contains("`LR_model`"), "{edit}");
        assert!(code.contains("y = LR_model(x)"), "{code}");
        // Two candidates: nothing is guessed.
        let mut code = "Model = 1\nMODEL = 2\nprint(model)\n".to_owned();
        assert!(rename_case_variant(&mut code, "model").is_none());
        assert!(rename_case_variant(&mut "x = 1\n".to_owned(), "y").is_none());
        // A class the script forgot to import is not the variable it builds (case 17).
        let mut code =
            "def build():\n    model = Model(inputs=[i], outputs=[o])\n    return model\nmodel = build()\n".to_owned();
        assert!(rename_case_variant(&mut code, "Model").is_none(), "{code}");
        let mut code = "net = 1\nnet = Net(net)\n".to_owned();
        assert!(rename_case_variant(&mut code, "Net").is_none(), "{code}");
        // A class-like name may still be a class defined under another case.
        let mut code = "class MyNet:\n    pass\nm = Mynet()\n".to_owned();
        assert!(rename_case_variant(&mut code, "Mynet").is_some(), "{code}");
    }

    #[test]
    fn data_defined_after_its_first_use_is_copied_before_it() {
        let mut code =
            "import numpy as np\nx = x.reshape(-1, 2)\nfit(x, y)\n\nx = np.zeros(4)\ny = np.ones(\n  2)\n".to_owned();
        let edit = copy_later_definition(&mut code, "x").unwrap();
        assert_eq!(
            code,
            "import numpy as np\nx = np.zeros(4)\nx = x.reshape(-1, 2)\nfit(x, y)\n\nx = np.zeros(4)\ny = np.ones(\n  2)\n"
        );
        assert!(edit.contains("`x = np.zeros(4)`"), "{edit}");
        // Only a complete one-line assignment is copied; a self-referencing one never.
        assert!(copy_later_definition(&mut code, "y").is_none());
        let mut code = "print(z)\nz = z + 1\n".to_owned();
        assert!(copy_later_definition(&mut code, "z").is_none());
    }

    #[test]
    fn only_lines_that_bind_the_names_are_kept_from_an_answer() {
        let names = ["lr".to_owned(), "Dense".to_owned(), "init".to_owned()];
        let answer = "from tensorflow.keras.layers import Dense\nimport os\nlr = 0.01\nprint(lr)\n\
                      model = Dense(3)\ndef init(m):\n    return m\nlr = 0.01\n";
        assert_eq!(
            binding_blocks(answer, &names),
            [
                "from tensorflow.keras.layers import Dense",
                "lr = 0.01",
                "def init(m):\n    return m"
            ]
        );
        // An unfinished line does not parse and is dropped.
        assert!(binding_blocks("lr = (0.01,\n", &names).is_empty());
    }

    #[test]
    fn a_definition_goes_before_the_first_statement_that_uses_it() {
        let code = "import torch\n\nclass Net:\n    def __init__(self):\n        self.w = torch.zeros(\n            size)\n\nopt = make(\n    lr=learn_rate)\n";
        assert_eq!(first_use_statement(code, "size"), code.find("class Net"));
        assert_eq!(first_use_statement(code, "learn_rate"), code.find("opt = make"));
        assert_eq!(first_use_statement(code, "nothing"), None);
        let mut code = code.to_owned();
        let blocks = ["learn_rate = 0.01".to_owned(), "from math import tau".to_owned()];
        let edit = insert_definitions(&mut code, &blocks, "scripted").unwrap();
        assert!(
            code.starts_with("from math import tau\nimport torch\n"),
            "imports go to the top: {code}"
        );
        assert!(code.contains("learn_rate = 0.01\nopt = make("), "{code}");
        assert!(edit.contains("learn_rate = 0.01; from math import tau"), "{edit}");
    }

    #[tokio::test]
    async fn a_class_like_name_is_never_made_data() {
        let report = ParsedReport::from(BugReport::default());
        let restructured = restructure_rules(&report);
        let input = GenInput::of_report(&report, &restructured);
        let mut code = "inp = Input(shape=(3,))\nprint(X_train)\n".to_owned();
        let llm = ScriptedLlm::new(vec![ScriptedReply::For {
            task: LlmTask::Define,
            reply: "tensorflow.keras.layers import Input\n```".into(),
        }]);
        let names = ["Input".to_owned(), "X_train".to_owned()];
        let (_, error) = resolve_undefined(&llm, &input, &mut code, &names, 0, None).await;
        assert!(error.is_none());
        assert!(
            code.starts_with("from tensorflow.keras.layers import Input\n"),
            "{code}"
        );
        assert!(!code.contains("Input = "), "{code}");
        assert!(code.contains("X_train = np.random"), "data names stay data: {code}");
        assert!(looks_like_class("Conv2D") && !looks_like_class("X_train") && !looks_like_class("N"));
    }

    /// Every import fails, as a made-up one does.
    struct NothingImports;

    impl ImportProbe for NothingImports {
        fn imports<'a>(&'a self, lines: &'a [String]) -> BoxFuture<'a, Option<Vec<bool>>> {
            Box::pin(async move { Some(vec![false; lines.len()]) })
        }
    }

    #[tokio::test]
    async fn an_import_that_does_not_run_becomes_a_minimal_class() {
        let report = ParsedReport::from(BugReport::default());
        let restructured = restructure_rules(&report);
        let input = GenInput::of_report(&report, &restructured);
        let mut code = "import torch.nn as nn\nlayer = TransitionLayer(4)\n".to_owned();
        let llm = ScriptedLlm::new(vec![
            ScriptedReply::For {
                task: LlmTask::Define,
                reply: "torch.nn import TransitionLayer\n```".into(),
            },
            ScriptedReply::For {
                task: LlmTask::Define,
                reply: "(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n```".into(),
            },
        ]);
        let names = ["TransitionLayer".to_owned()];
        let (edits, error) = resolve_undefined(&llm, &input, &mut code, &names, 0, Some(&NothingImports)).await;
        assert!(error.is_none());
        assert_eq!(
            code,
            "import torch.nn as nn\nclass TransitionLayer(nn.Module):\n    def __init__(self, n):\n        super().__init__()\nlayer = TransitionLayer(4)\n"
        );
        assert!(!code.contains("from torch.nn import"), "{code}");
        assert!(edits[0].contains("class TransitionLayer(nn.Module):"), "{edits:?}");
        assert!(llm.prompts()[1].1.contains("the reporter's own class"));
    }

    #[test]
    fn a_class_like_name_is_asked_for_its_import_a_value_for_its_definition() {
        let code = "import tensorflow as tf\nx = LeakyReLU()(y)\nopt = f(lr=learn_rate)\n";
        let (messages, prefill) = definition_messages(code, "LeakyReLU", Ask::Import);
        assert_eq!(prefill, "```python\nfrom ");
        assert!(
            messages[1].content.contains("line 2: x = LeakyReLU()(y)"),
            "{}",
            messages[1].content
        );
        assert!(messages[1].content.contains("import tensorflow as tf"));
        assert_eq!(messages[2].content, prefill, "the answer is started for the model");
        let (_, prefill) = definition_messages(code, "learn_rate", Ask::Value);
        assert_eq!(prefill, "```python\nlearn_rate = ");
        assert!(used_as_module(
            "x = pytorch.tensor([1])\ny = pytorch.zeros(2)\n",
            "pytorch"
        ));
        assert!(!used_as_module("x = pytorch.tensor([1])\nf(pytorch)\n", "pytorch"));
        let (_, prefill) = definition_messages(code, "pytorch", Ask::Module);
        assert_eq!(prefill, "```python\nimport ");
        let (messages, prefill) = definition_messages(code, "LeakyReLU", Ask::Class);
        assert_eq!(prefill, "```python\nclass LeakyReLU");
        assert!(messages[1].content.contains("the reporter's own class"));
    }

    #[tokio::test]
    async fn the_llm_defines_what_neither_a_rename_nor_the_rules_can() {
        let report = ParsedReport::from(BugReport {
            title: "ValueError: optimizer got an empty parameter list".into(),
            ..BugReport::default()
        });
        let restructured = restructure_rules(&report);
        let input = GenInput::of_report(&report, &restructured);
        let mut code = "import torch\nLR_model = torch.nn.Module()\n\
                        opt = torch.optim.SGD(params=LR_model.parameters(), weight_decay=weight_decay)\ny = lr_model(x)\n"
            .to_owned();
        let llm = ScriptedLlm::new(vec![ScriptedReply::For {
            task: LlmTask::Define,
            reply: "0.01\nopt = None\n```".into(),
        }]);
        let names = ["weight_decay".to_owned(), "lr_model".to_owned(), "x".to_owned()];
        let (edits, error) = resolve_undefined(&llm, &input, &mut code, &names, 0, None).await;
        assert!(error.is_none());
        assert!(code.contains("y = LR_model(x)"), "renamed: {code}");
        assert!(
            code.contains("x = torch.as_tensor(np.random.default_rng(0)"),
            "the rules define data, as a tensor in a torch script: {code}"
        );
        assert!(
            code.contains("weight_decay = 0.01\nopt = torch.optim.SGD("),
            "the LLM's line goes before its use: {code}"
        );
        assert!(!code.contains("opt = None"), "a line binding another name is dropped");
        assert!(edits[0].starts_with("renamed `lr_model`"), "{edits:?}");
        assert!(
            edits.last().is_some_and(|e| e.starts_with("scripted defined")),
            "{edits:?}"
        );
        let prompt = &llm.prompts()[0].1;
        assert!(
            prompt.contains("It uses `weight_decay`") && prompt.contains(": opt = torch.optim.SGD("),
            "{prompt}"
        );
        assert_eq!(llm.prompts().len(), 1, "only what the rules left is asked");
    }

    #[tokio::test]
    async fn a_name_the_script_reads_before_binding_it_still_gets_data() {
        // Development case 21: the snippet starts `x = x.reshape(-1, 28, 28, 1)`; the rules
        // defined `x`, the LLM path took the line for its definition and ran into NameError.
        let report = ParsedReport::from(BugReport {
            title: "InvalidArgumentError on 28x28 pictures".into(),
            ..BugReport::default()
        });
        let restructured = restructure_rules(&report);
        let input = GenInput::of_report(&report, &restructured);
        let mut code = "import numpy as np\nx = x.reshape(-1, 28, 28, 1)\nmodel.fit(x, y)\n".to_owned();
        let llm = ScriptedLlm::new(vec![]);
        let names = ["x".to_owned(), "y".to_owned()];
        let (_, error) = resolve_undefined(&llm, &input, &mut code, &names, 0, None).await;
        assert!(error.is_none());
        let defined = code.find("x = np.random").expect("x gets synthetic data");
        assert!(defined < code.find("x = x.reshape").unwrap(), "{code}");
        assert!(code.contains("y = "), "{code}");
    }

    #[tokio::test]
    async fn a_called_name_is_imported_or_written_as_a_function_never_a_number() {
        // Development case 13 with the 0.5B: `tqdm = 1` and `author_dataloader = 1` (both now
        // come from the tools: an import and a torch loader; names no table knows are asked).
        let report = ParsedReport::from(BugReport::default());
        let restructured = restructure_rules(&report);
        let input = GenInput::of_report(&report, &restructured);
        let mut code = "import torch\nfor feature, target in track(batches):\n    print(feature)\n".to_owned();
        let llm = ScriptedLlm::new(vec![
            ScriptedReply::For {
                task: LlmTask::Define,
                reply: "progress import track\n```".into(),
            },
            ScriptedReply::For {
                task: LlmTask::Define,
                reply: "1\n```".into(),
            },
            ScriptedReply::For {
                task: LlmTask::Define,
                reply: "iterable):\n    return iterable\n```".into(),
            },
        ]);
        let names = ["track".to_owned(), "batches".to_owned()];
        let (_, error) = resolve_undefined(&llm, &input, &mut code, &names, 0, Some(&NothingImports)).await;
        assert!(error.is_none());
        assert!(
            llm.prompts()[0].1.contains("Write the import line"),
            "a called name is asked for its import"
        );
        assert!(
            code.contains("def track(iterable):\n    return iterable\nfor feature"),
            "its import does not run: the reporter's own function: {code}"
        );
        assert!(
            !code.contains("batches = 1"),
            "no number for what the script loops over: {code}"
        );
        let mut code = "import torch\nfor feature, target in tqdm(author_dataloader):\n    print(feature)\n".to_owned();
        let names = ["tqdm".to_owned(), "author_dataloader".to_owned()];
        let silent = ScriptedLlm::new(Vec::new());
        let (_, error) = resolve_undefined(&silent, &input, &mut code, &names, 0, Some(&NothingImports)).await;
        assert!(error.is_none() && silent.prompts().is_empty(), "the tools define both");
        assert!(
            code.contains("from tqdm import tqdm") && code.contains("author_dataloader = torch.utils.data.DataLoader("),
            "{code}"
        );
        assert!(used_as_function("y = tqdm(x)\nz = tqdm(y)\n", "tqdm"));
        assert!(!used_as_function("y = tqdm(x)\nf = tqdm\n", "tqdm") && !used_as_function("m.tqdm(x)\n", "tqdm"));
        assert!(used_as_object("for a in loader:\n", "loader") && used_as_object("x = data[0]\n", "data"));
        assert!(!used_as_object("n = size * 2\n", "size"));
        assert!(is_bare_literal("loader = 1") && is_bare_literal("x = 'a'") && !is_bare_literal("x = np.ones(3)"));
    }
}
