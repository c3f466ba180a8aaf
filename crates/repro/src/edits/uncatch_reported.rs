//! Tool over an LLM's draft: a `try` whose `except` catches the reported exception (or
//! any exception) turns the crash that is the bug into a printed message, which no check
//! can tell from a script that works. Small models write that guard even when told not
//! to. The `try`'s body stays, unguarded; the handler goes.

use std::sync::LazyLock;

use regex::Regex;
use replayground_shared::repro::{RestructuredReport, SymptomClass};

use super::re;

static TRY: LazyLock<Regex> = LazyLock::new(|| re(r"^(\s*)try\s*:\s*(?:#.*)?$"));
static EXCEPT: LazyLock<Regex> =
    LazyLock::new(|| re(r"^except\b\s*\(?\s*([\w.,\s]*?)\s*\)?\s*(?:as\s+\w+\s*)?:\s*(?:#.*)?$"));
static FOLLOWS: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:except|else|finally)\b"));

/// Unwraps every `try`/`except` of a crash report's script whose one handler catches the
/// reported exception type, `Exception`, `BaseException`, or anything (bare `except`).
/// `try`s with more clauses (another `except`, `else`, `finally`) are left alone.
pub(crate) fn uncatch_reported(code: &mut String, report: &RestructuredReport) -> Option<String> {
    if report.symptom.class != SymptomClass::Crash {
        return None;
    }
    let reported = report.symptom.error_type.as_deref();
    let lines: Vec<&str> = code.lines().collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut unwrapped = 0;
    let mut i = 0;
    while i < lines.len() {
        if let Some((body, next)) = unwrap_at(&lines, i, reported) {
            out.extend(body);
            unwrapped += 1;
            i = next;
        } else {
            out.push(lines[i].to_owned());
            i += 1;
        }
    }
    if unwrapped == 0 {
        return None;
    }
    let mut text = out.join("\n");
    if code.ends_with('\n') {
        text.push('\n');
    }
    *code = text;
    Some(format!(
        "removed {unwrapped} try/except that caught the reported {}: the crash is the bug",
        reported.unwrap_or("exception")
    ))
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The index of the next line that is not blank at or after `from`.
fn next_code(lines: &[&str], from: usize) -> Option<usize> {
    (from..lines.len()).find(|&j| !lines[j].trim().is_empty())
}

/// The end (exclusive) of the block indented deeper than `outer` that starts at `from`.
fn block_end(lines: &[&str], from: usize, outer: usize) -> usize {
    let mut end = from;
    for (j, line) in lines.iter().enumerate().skip(from) {
        if line.trim().is_empty() {
            continue;
        }
        if indent(line) <= outer {
            break;
        }
        end = j + 1;
    }
    end
}

/// When line `at` opens a `try` to unwrap: its body, dedented to the `try`'s level, and
/// the index of the first line after the handler.
fn unwrap_at(lines: &[&str], at: usize, reported: Option<&str>) -> Option<(Vec<String>, usize)> {
    let outer = TRY.captures(lines[at])?.get(1).map_or(0, |m| m.as_str().len());
    let body_start = next_code(lines, at + 1)?;
    let body_end = block_end(lines, body_start, outer);
    let handler = next_code(lines, body_end)?;
    if body_end == body_start || indent(lines[handler]) != outer {
        return None;
    }
    let caught = EXCEPT.captures(lines[handler].trim_start())?;
    let catches_it = caught[1].trim().is_empty()
        || caught[1]
            .split(',')
            .map(|t| t.trim().rsplit('.').next().unwrap_or(""))
            .any(|t| t == "Exception" || t == "BaseException" || Some(t) == reported);
    if !catches_it {
        return None;
    }
    let after = block_end(lines, handler + 1, outer);
    if next_code(lines, after).is_some_and(|j| indent(lines[j]) == outer && FOLLOWS.is_match(lines[j].trim_start())) {
        return None;
    }
    let shift = indent(lines[body_start]) - outer;
    let body = lines[body_start..body_end]
        .iter()
        .map(|line| {
            if indent(line) >= shift + outer {
                format!("{}{}", &line[..outer], &line[outer + shift..])
            } else {
                line.trim_start().to_owned()
            }
        })
        .collect();
    Some((body, after))
}

#[cfg(test)]
mod tests {
    use super::*;
    use replayground_shared::repro::Symptom;

    fn report(class: SymptomClass, error_type: Option<&str>) -> RestructuredReport {
        RestructuredReport {
            problem: String::new(),
            observed: String::new(),
            expected: String::new(),
            steps: vec![],
            symptom: Symptom {
                class,
                error_type: error_type.map(str::to_owned),
                cues: vec![],
            },
            framework: None,
            refined_by_llm: false,
        }
    }

    fn crash(error_type: &str) -> RestructuredReport {
        report(SymptomClass::Crash, Some(error_type))
    }

    #[test]
    fn a_handler_of_the_reported_exception_goes_and_its_body_stays() {
        let mut code = "x = 1\ntry:\n    model.fit(x, y)\n    print('done')\nexcept ValueError as e:\n    print(f'Caught: {e}')\nprint('end')\n".to_owned();
        let edit = uncatch_reported(&mut code, &crash("ValueError")).unwrap();
        assert_eq!(code, "x = 1\nmodel.fit(x, y)\nprint('done')\nprint('end')\n");
        assert!(edit.contains("ValueError"), "{edit}");
        // Nested in a function, a tuple with a qualified name, and a bare except.
        let mut code = "def f():\n    try:\n        g()\n    except (KeyError, tf.errors.InvalidArgumentError):\n        pass\n    return 1\ntry:\n  h()\nexcept:\n  pass\n".to_owned();
        uncatch_reported(&mut code, &crash("InvalidArgumentError")).unwrap();
        assert_eq!(code, "def f():\n    g()\n    return 1\nh()\n");
        assert!(crate::checks::structural(&code).passed);
    }

    #[test]
    fn other_handlers_and_other_symptoms_are_left_alone() {
        let kept = [
            // Another exception type: the script's own logic.
            "try:\n    import PIL\nexcept ImportError:\n    PIL = None\n",
            // More clauses than one handler.
            "try:\n    f()\nexcept ValueError:\n    pass\nfinally:\n    close()\n",
            "try:\n    f()\nexcept ValueError:\n    pass\nexcept KeyError:\n    pass\n",
        ];
        for original in kept {
            let mut code = original.to_owned();
            assert!(
                uncatch_reported(&mut code, &crash("ValueError")).is_none(),
                "{original}"
            );
            assert_eq!(code, original);
        }
        let silent = report(SymptomClass::WrongCalculation, None);
        let mut code = "try:\n    f()\nexcept Exception:\n    pass\n".to_owned();
        assert!(uncatch_reported(&mut code, &silent).is_none());
    }
}
