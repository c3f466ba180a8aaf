//! Edit action: code pasted with a common indentation dedented.

/// Dedents code pasted with a common indentation.
pub(crate) fn dedent(code: &mut String) -> Option<String> {
    let indent = code
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()?;
    if indent == 0 {
        return None;
    }
    *code = code
        .lines()
        .map(|l| {
            if l.len() >= indent {
                &l[indent..]
            } else {
                l.trim_start()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    Some(format!("removed a common indentation of {indent} spaces"))
}
