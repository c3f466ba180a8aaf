//! Edit action: notebook and REPL syntax removed (`!pip`, `%magic`, `display(...)`,
//! `>>>` prompts), so a pasted cell runs as a script.

use std::sync::LazyLock;

use regex::Regex;

use super::code::re;

/// Removes notebook and REPL syntax: `!pip`, `%magic`, `display(...)`, `>>>` prompts.
pub(crate) fn strip_notebook(code: &mut String) -> Option<String> {
    static DISPLAY: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)(^|[^\w.])display\("));
    let doctest = code.lines().any(|l| l.starts_with(">>> "));
    let mut removed = 0;
    let mut out = String::new();
    for line in code.lines() {
        let trimmed = line.trim_start();
        if doctest {
            if let Some(rest) = line.strip_prefix(">>> ").or_else(|| line.strip_prefix("... ")) {
                out.push_str(rest);
                out.push('\n');
            } else if line == ">>>" || line == "..." {
                out.push('\n');
            } else {
                removed += 1;
            }
            continue;
        }
        if trimmed.starts_with('!') || trimmed.starts_with('%') || trimmed.starts_with("get_ipython()") {
            removed += 1;
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    let displays = DISPLAY.find_iter(&out).count();
    let out = DISPLAY.replace_all(&out, "${1}print(").into_owned();
    if removed == 0 && displays == 0 && !doctest {
        return None;
    }
    *code = out;
    Some(if doctest {
        format!("removed the REPL prompts and {removed} output lines")
    } else {
        format!("stripped {removed} notebook command(s) and {displays} display() call(s)")
    })
}
