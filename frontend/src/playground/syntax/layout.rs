//! Indentation and bracket errors as CPython's tokenizer reports them, which
//! tree-sitter's error recovery hides or places elsewhere.

use super::SyntaxProblem;

pub(super) const TAB_ERROR: &str = "inconsistent use of tabs and spaces in indentation";

/// The first error of CPython's tokenizer that tree-sitter's recovery hides or places
/// elsewhere: indentation (`IndentationError`, `TabError`) and brackets (one never closed is
/// named on its own line, as CPython does). A block header on the last line is not an
/// error yet: its body is probably being typed.
pub fn layout_problem(text: &str) -> Option<SyntaxProblem> {
    let at = |row: usize, line: &str, line_offset: usize, i: usize, message: String| SyntaxProblem {
        line: row as u32 + 1,
        column: line[..i].chars().count() as u32 + 1,
        offset: line_offset + i,
        message,
    };
    // Indentation levels as CPython keeps them: a tab to the next multiple of 8, and a
    // tab as 1 column; levels that order differently under the two are a TabError.
    let mut levels = vec![(0_usize, 0_usize)];
    let mut open: Vec<(char, usize, usize, usize)> = Vec::new();
    let mut string: Option<(char, bool)> = None;
    let (mut continued, mut ends_with_colon) = (false, false);
    let mut header: Option<usize> = None;
    let mut logical_start = 0;
    let mut line_offset = 0;
    for (row, line) in text.split('\n').enumerate() {
        let this_offset = line_offset;
        line_offset += line.len() + 1;
        let mut start = 0;
        if string.is_none() && open.is_empty() && !continued {
            let (mut col, mut alt) = (0, 0);
            for c in line.chars() {
                match c {
                    ' ' => (col, alt) = (col + 1, alt + 1),
                    '\t' => (col, alt) = ((col / 8 + 1) * 8, alt + 1),
                    '\x0c' => (col, alt) = (0, 0),
                    _ => break,
                }
                start += 1;
            }
            let rest = line[start..].trim_end();
            if rest.is_empty() || rest.starts_with('#') {
                continue;
            }
            let problem = |message: &str| Some(at(row, line, this_offset, start, message.to_owned()));
            let (top, top_alt) = levels.last().copied().unwrap_or_default();
            if col > top {
                if header.is_none() {
                    return problem("unexpected indent");
                }
                if alt <= top_alt {
                    return problem(TAB_ERROR);
                }
                levels.push((col, alt));
            } else {
                if let Some(h) = header {
                    return problem(&format!("expected an indented block after line {}", h + 1));
                }
                while levels.last().is_some_and(|&(c, _)| col < c) {
                    levels.pop();
                }
                match levels.last() {
                    Some(&(c, a)) if c == col => {
                        if a != alt {
                            return problem(TAB_ERROR);
                        }
                    }
                    _ => return problem("unindent does not match any outer indentation level"),
                }
            }
            header = None;
            ends_with_colon = false;
            logical_start = row;
        }
        continued = false;
        let mut chars = line[start..].char_indices().map(|(i, c)| (i + start, c)).peekable();
        while let Some((i, c)) = chars.next() {
            if let Some((quote, triple)) = string {
                if c == '\\' {
                    chars.next();
                } else if c == quote && (!triple || line.as_bytes()[i..].starts_with(&[quote as u8; 3])) {
                    if triple {
                        chars.next();
                        chars.next();
                    }
                    string = None;
                    ends_with_colon = false;
                }
                continue;
            }
            match c {
                '#' => break,
                '\'' | '"' => {
                    let triple = line.as_bytes()[i..].starts_with(&[c as u8; 3]);
                    if triple {
                        chars.next();
                        chars.next();
                    }
                    string = Some((c, triple));
                }
                '(' | '[' | '{' => open.push((c, row, i, this_offset)),
                ')' | ']' | '}' => {
                    let opening = match c {
                        ')' => '(',
                        ']' => '[',
                        _ => '{',
                    };
                    match open.pop() {
                        Some((b, ..)) if b == opening => {}
                        Some((b, r, ..)) => {
                            let on = if r == row {
                                String::new()
                            } else {
                                format!(" on line {}", r + 1)
                            };
                            let message = format!("closing `{c}` does not match opening `{b}`{on}");
                            return Some(at(row, line, this_offset, i, message));
                        }
                        None => return Some(at(row, line, this_offset, i, format!("unmatched `{c}`"))),
                    }
                }
                '\\' if chars.peek().is_none() => continued = true,
                _ => {}
            }
            if !c.is_whitespace() {
                ends_with_colon = c == ':';
            }
        }
        // A one-line string left open: tree-sitter reports it.
        if string.is_some_and(|(_, triple)| !triple) {
            string = None;
        }
        if string.is_none() && open.is_empty() && !continued && ends_with_colon {
            header = Some(logical_start);
        }
    }
    let (bracket, row, i, line_offset) = open.pop()?;
    let line = text[line_offset..].split('\n').next().unwrap_or_default();
    Some(at(row, line, line_offset, i, format!("`{bracket}` was never closed")))
}
