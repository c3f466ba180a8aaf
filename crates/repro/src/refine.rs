//! Refinement (RepGen §3.3): the checks' feedback on one candidate turned into the next.
//! An LLM gets the feedback as text with its previous script ([`feedback_text`]); the
//! rule-based generator applies the edits the feedback calls for ([`rule_refine`], as
//! [`next_rule_candidate`] decides): an
//! undefined name gets an import or a definition, a line that does not parse is commented
//! out, a run stopped at the time limit gets smaller loops.

use replayground_shared::repro::{CheckKind, CheckVerdict};

use crate::checks::{RuffDiagnostic, RunObservation};
use crate::edits::{
    append_observer, comment_out_unparsable, complete_imports, define_undefined, detach_project_imports,
    drop_imports_of, inferred_shape, missing_array_file, shrink_loops, synthesize_data, write_missing_file,
};
use crate::generate::{Candidate, GenInput, rule_candidate};
use replayground_exec::sandbox::Termination;

/// What the checks said about the previous candidate.
#[derive(Debug, Clone, Copy, Default)]
pub struct Feedback<'a> {
    pub verdicts: &'a [CheckVerdict],
    pub diagnostics: &'a [RuffDiagnostic],
    pub run: Option<&'a RunObservation>,
}

/// The feedback as text: the failing checks first, one line each.
pub fn feedback_text(verdicts: &[CheckVerdict]) -> String {
    let mut lines: Vec<String> = verdicts
        .iter()
        .filter(|v| !v.passed)
        .map(|v| format!("{:?} check failed: {}", v.check, v.detail))
        .collect();
    if lines.is_empty() {
        lines = verdicts
            .iter()
            .map(|v| format!("{:?}: {}", v.check, v.detail))
            .collect();
    }
    lines.join("\n")
}

/// The rule-based generator's next candidate: the first one from the report, then, with
/// refinement on, the edits the previous candidate's feedback calls for; `None` when no
/// new script would come.
pub fn next_rule_candidate(
    input: &GenInput<'_>,
    previous: Option<(&Candidate, Feedback<'_>)>,
    refining: bool,
) -> Option<Candidate> {
    match previous {
        None => Some(rule_candidate(input)),
        Some((candidate, feedback)) if refining => rule_refine(input, candidate, &feedback),
        // Without refinement the rules would write the same script again.
        Some(_) => None,
    }
}

/// Whether a module a run found missing is one the generator made up: a Python module name
/// that neither the report (its text and code) nor any project file mentions. Such a
/// module is never a reason to stop: the script can do without it.
pub fn is_invented_module(input: &GenInput<'_>, module: &str) -> bool {
    let Ok(word) = regex::Regex::new(&format!(r"\b{}\b", regex::escape(module))) else {
        return false;
    };
    let is_identifier = !module.is_empty() && module.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    is_identifier
        && !word.is_match(input.report.text())
        && !input.report.code().iter().any(|code| word.is_match(code))
        && !input
            .project
            .is_some_and(|project| project.python_files().any(|file| word.is_match(&file.text)))
}

/// Whether a module a run found missing is the reporter's own file, which the report
/// names (`SegDataset (in data.py, not shown)`) but does not hold: a script can do without
/// it as with an invented one, its names standing in. A package the report only imports
/// is what the bug may need, and stays.
pub fn is_reporters_module(input: &GenInput<'_>, module: &str) -> bool {
    let Ok(file) = regex::Regex::new(&format!(r"\b{}\.py\b", regex::escape(module))) else {
        return false;
    };
    file.is_match(input.report.text())
        && !input
            .project
            .is_some_and(|project| project.python_files().any(|f| holds_module(&f.path, module)))
}

/// Whether a project file is the module's own: `data.py` or `data/__init__.py` holds `data`,
/// `mydata.py` does not.
fn holds_module(path: &str, module: &str) -> bool {
    let path = std::path::Path::new(path);
    let stem = path.file_stem().and_then(|stem| stem.to_str());
    match stem {
        Some("__init__") => path
            .parent()
            .and_then(|folder| folder.file_name())
            .is_some_and(|folder| folder == module),
        stem => stem == Some(module),
    }
}

/// Whether the script can do without a module the run found missing: one the generator
/// made up ([`is_invented_module`]) or the reporter's own file ([`is_reporters_module`]).
pub fn can_do_without(input: &GenInput<'_>, module: &str) -> bool {
    is_invented_module(input, module) || is_reporters_module(input, module)
}

/// The next candidate without a model, driven by the feedback; `None` when no edit applies.
pub fn rule_refine(input: &GenInput<'_>, previous: &Candidate, feedback: &Feedback<'_>) -> Option<Candidate> {
    let mut code = previous.code.clone();
    let mut edits = Vec::new();
    let failed = |kind: CheckKind| feedback.verdicts.iter().any(|v| v.check == kind && !v.passed);
    let report = input.report_text();
    let shape = inferred_shape(&report);

    if failed(CheckKind::Structural)
        && let Some(edit) = comment_out_unparsable(&mut code)
    {
        edits.push(edit);
    }

    let mut undefined: Vec<String> = feedback
        .diagnostics
        .iter()
        .filter(|d| d.code.as_deref() == Some("F821"))
        .filter_map(|d| d.message.split('`').nth(1).map(str::to_owned))
        .collect();
    if let Some(edit) = detach_project_imports(&mut code, input.project_modules, input.project) {
        edits.push(edit);
    }
    if let Some(t) = feedback
        .run
        .and_then(|run| run.traceback.as_ref())
        .filter(|t| t.error_type == "NameError")
        && let Some(name) = t.message.split('\'').nth(1)
    {
        undefined.push(name.to_owned());
    }
    // A module the run lacks that nothing in the report or the project uses was made up by
    // the generator, or is the reporter's own file the report does not hold: its imports
    // go, and the names they bound get definitions if unbound.
    if let Some(missing) = feedback.run.and_then(|run| run.missing.as_deref())
        && can_do_without(input, missing)
        && let Some((edit, bound)) = drop_imports_of(&mut code, missing)
    {
        edits.push(edit);
        undefined.extend(bound);
    }
    undefined.sort();
    undefined.dedup();
    edits.extend(define_undefined(&mut code, &undefined, input.project, Some(&report)));
    // A data file read through a path the code passes around, which the run found missing.
    if let Some(path) = feedback.run.and_then(missing_array_file)
        && let Some(edit) = write_missing_file(&mut code, &path, &report, &shape)
    {
        edits.push(edit);
    }

    if let Some(run) = feedback.run {
        if matches!(run.termination, Termination::Stopped(_))
            && let Some(edit) = shrink_loops(&mut code, 5, 100)
        {
            edits.push(edit);
        }
        if run.missing.is_none()
            && matches!(run.termination, Termination::Exited(0))
            && let Some(edit) = append_observer(&mut code, input.restructured)
        {
            edits.push(edit);
        }
    }
    if let Some(edit) = synthesize_data(&mut code, &shape) {
        edits.push(edit);
    }
    if let Some(edit) = complete_imports(&mut code) {
        edits.push(edit);
    }
    (code != previous.code).then_some(Candidate { code, edits })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::{Project, SourceFile};
    use crate::report::ParsedReport;
    use crate::restructure::restructure_rules;
    use replayground_shared::repro::BugReport;

    #[test]
    fn refinement_follows_the_feedback() {
        let report = ParsedReport::from(BugReport {
            title: "loss is nan".into(),
            snippets: vec!["loss = np.log(x)\n".into()],
            ..BugReport::default()
        });
        let r = restructure_rules(&report);
        let input = GenInput::of_report(&report, &r);
        let first = rule_candidate(&input);
        let diagnostics: Vec<RuffDiagnostic> = serde_json::from_str(
            r#"[{"code": "F821", "message": "Undefined name `x`", "location": {"row": 3, "column": 1}}]"#,
        )
        .unwrap();
        let verdicts = [CheckVerdict {
            check: CheckKind::Static,
            passed: false,
            score: None,
            detail: "ruff".into(),
            approximated: false,
            missing: None,
        }];
        let next = rule_refine(
            &input,
            &first,
            &Feedback {
                verdicts: &verdicts,
                diagnostics: &diagnostics,
                run: None,
            },
        )
        .unwrap();
        assert!(
            next.code
                .contains("x = np.random.default_rng(0).standard_normal((100, 4))"),
            "{}",
            next.code
        );
        // Nothing left to fix: no new candidate.
        assert!(rule_refine(&input, &next, &Feedback::default()).is_none());

        let broken = Candidate {
            code: "import numpy as np\nx = (1,\nprint(x)\ny = 2\n".into(),
            edits: vec![],
        };
        let verdicts = [crate::checks::structural(&broken.code)];
        let fixed = rule_refine(
            &input,
            &broken,
            &Feedback {
                verdicts: &verdicts,
                ..Feedback::default()
            },
        )
        .unwrap();
        assert!(fixed.edits[0].contains("commented out"), "{:?}", fixed.edits);

        // Names the project defines: its functions first, then how its entry point builds
        // the objects, so that the assignments can call them.
        let project = Project {
            files: vec![SourceFile {
                path: "report.py".into(),
                text: "def build():\n    return [1]\n\nif __name__ == \"__main__\":\n    a_model = build()\n".into(),
            }],
            notes: vec![],
        };
        let with_project = GenInput {
            project: Some(&project),
            ..input
        };
        let uses = Candidate {
            code: "import numpy as np\nprint(a_model)\n".into(),
            edits: vec![],
        };
        let diagnostics: Vec<RuffDiagnostic> = serde_json::from_str(
            r#"[{"code": "F821", "message": "Undefined name `a_model`", "location": {"row": 2, "column": 7}},
                {"code": "F821", "message": "Undefined name `build`", "location": {"row": 2, "column": 7}}]"#,
        )
        .unwrap();
        let defined = rule_refine(
            &with_project,
            &uses,
            &Feedback {
                verdicts: &verdicts,
                diagnostics: &diagnostics,
                run: None,
            },
        )
        .unwrap();
        // `a_model` sorts before `build`, yet the function comes first.
        let (function, built) = (
            defined.code.find("def build").expect("the function"),
            defined.code.find("a_model = build()").expect("the entry point's line"),
        );
        assert!(function < built, "{}", defined.code);
    }

    #[test]
    fn a_made_up_module_is_dropped_and_a_reported_one_is_not() {
        let report = ParsedReport::from(BugReport {
            title: "fit returns nan with mylib".into(),
            ..BugReport::default()
        });
        let r = restructure_rules(&report);
        let input = GenInput::of_report(&report, &r);
        let stderr = "Traceback (most recent call last):\n  File \"/tmp/s.py\", line 2, in <module>\nModuleNotFoundError: No module named 'reproduction_script'\n";
        let run = crate::checks::observe(Termination::Exited(1), "", stderr, 5);
        assert_eq!(run.missing.as_deref(), Some("reproduction_script"));
        let previous = Candidate {
            code: "import numpy as np\nfrom reproduction_script import fit, LogisticRegression\n\ndef fit(x):\n    return np.log(x)\n\nprint(fit(0.0))\n".into(),
            edits: vec![],
        };
        let feedback = Feedback {
            run: Some(&run),
            ..Feedback::default()
        };
        assert!(is_invented_module(&input, "reproduction_script"));
        let next = rule_refine(&input, &previous, &feedback).expect("an edit applies");
        assert!(!next.code.contains("reproduction_script"), "{}", next.code);
        assert!(next.code.contains("def fit(x)"), "the script's own definition stays");
        assert!(next.edits[0].contains("not installed here"), "{:?}", next.edits);

        // A module the report names is what the bug needs: nothing is dropped.
        assert!(!is_invented_module(&input, "mylib"));
        let mylib = crate::checks::observe(
            Termination::Exited(1),
            "",
            &stderr.replace("reproduction_script", "mylib"),
            5,
        );
        let uses = Candidate {
            code: "import mylib\nprint(mylib.fit())\n".into(),
            edits: vec![],
        };
        let feedback = Feedback {
            run: Some(&mylib),
            ..Feedback::default()
        };
        assert!(rule_refine(&input, &uses, &feedback).is_none_or(|next| next.code.contains("import mylib")));
        assert!(!can_do_without(&input, "mylib"));

        // The reporter's own file, which the report names but does not hold, goes too; its
        // names get stand-ins.
        let own = ParsedReport::from(BugReport {
            title: "cat fails in the decoder".into(),
            description: "SegDataset (in data.py, not shown) loads the tiles.".into(),
            ..BugReport::default()
        });
        let r = restructure_rules(&own);
        let input = GenInput::of_report(&own, &r);
        assert!(is_reporters_module(&input, "data") && can_do_without(&input, "data"));
        assert!(!is_reporters_module(&input, "torch"));
        // A project file whose name only ends like the module's is another module; the
        // module's own file or package is the project's.
        for (path, holds) in [
            ("src/mydata.py", false),
            ("src/data.py", true),
            ("data/__init__.py", true),
        ] {
            let project = Project {
                files: vec![SourceFile {
                    path: path.into(),
                    text: "X = 1\n".into(),
                }],
                notes: vec![],
            };
            let with_project = GenInput {
                project: Some(&project),
                ..input
            };
            assert_eq!(is_reporters_module(&with_project, "data"), !holds, "{path}");
        }
        let data = crate::checks::observe(
            Termination::Exited(1),
            "",
            &stderr.replace("reproduction_script", "data"),
            5,
        );
        let uses = Candidate {
            code: "from data import SegDataset\nds = SegDataset('tiles')\nprint(len(ds))\n".into(),
            edits: vec![],
        };
        let feedback = Feedback {
            run: Some(&data),
            ..Feedback::default()
        };
        let next = rule_refine(&input, &uses, &feedback).expect("an edit applies");
        assert!(!next.code.contains("from data import"), "{}", next.code);
        assert!(next.code.contains("SegDataset"), "{}", next.code);
    }

    #[test]
    fn the_rules_refine_only_when_refinement_is_on() {
        let report = ParsedReport::from(BugReport {
            snippets: vec!["print(1)\n".into()],
            ..BugReport::default()
        });
        let r = restructure_rules(&report);
        let input = GenInput::of_report(&report, &r);
        assert_eq!(next_rule_candidate(&input, None, false), Some(rule_candidate(&input)));
        let broken = Candidate {
            code: "x = (\nprint(x)\n".to_owned(),
            edits: Vec::new(),
        };
        let verdicts = [crate::checks::structural(&broken.code)];
        let feedback = Feedback {
            verdicts: &verdicts,
            ..Feedback::default()
        };
        assert!(next_rule_candidate(&input, Some((&broken, feedback)), false).is_none());
        let fixed = next_rule_candidate(&input, Some((&broken, feedback)), true).unwrap();
        assert!(fixed.code.contains("# replayground: does not parse"), "{}", fixed.code);
    }
}
