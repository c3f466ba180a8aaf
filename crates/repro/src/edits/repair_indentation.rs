//! Edit action: a pasted script whose indentation Python refuses ("unindent does not
//! match any outer indentation level", "unexpected indent": a line one space off after
//! copying from a web page) gets each such line moved to the nearest block it can
//! belong to: the innermost open block at most as deep as the line was. Only lines Python
//! would refuse are moved (tree-sitter accepts some of them, so its parse cannot be the
//! test), and only when the result parses.

/// Where a line starts, for the lines that continue a statement.
#[derive(Default)]
struct Scanner {
    /// Open brackets.
    depth: usize,
    /// The quote of an open triple-quoted string.
    triple: Option<char>,
    /// The last line ended with a backslash.
    backslash: bool,
}

impl Scanner {
    /// Whether a line begins inside a statement that an earlier line started.
    fn continues(&self) -> bool {
        self.depth > 0 || self.triple.is_some() || self.backslash
    }

    /// Reads one line; returns whether it ends a block header (`:` outside strings,
    /// brackets and comments).
    fn read(&mut self, line: &str) -> bool {
        let chars: Vec<char> = line.chars().collect();
        self.backslash = false;
        let mut last = None;
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if let Some(q) = self.triple {
                if c == q && chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q) {
                    self.triple = None;
                    i += 3;
                } else {
                    i += if c == '\\' { 2 } else { 1 };
                }
                continue;
            }
            match c {
                '#' => break,
                '\'' | '"' if chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c) => {
                    self.triple = Some(c);
                    i += 3;
                    continue;
                }
                '\'' | '"' => {
                    // A one-line string: up to its closing quote.
                    i += 1;
                    while i < chars.len() && chars[i] != c {
                        i += if chars[i] == '\\' { 2 } else { 1 };
                    }
                }
                '(' | '[' | '{' => self.depth += 1,
                ')' | ']' | '}' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
            if !c.is_whitespace() {
                last = Some(c);
            }
            i += 1;
        }
        self.backslash = self.triple.is_none() && last == Some('\\');
        self.depth == 0 && self.triple.is_none() && last == Some(':')
    }
}

/// Moves each line Python's indentation rules refuse to the nearest open block.
pub(crate) fn repair_indentation(code: &mut String) -> Option<String> {
    if code.lines().any(|l| l.starts_with('\t')) {
        return None;
    }
    let mut stack = vec![0usize];
    let mut scanner = Scanner::default();
    let mut opens_block = false;
    let mut moved = 0;
    let mut out: Vec<String> = Vec::new();
    for line in code.lines() {
        let text = line.trim_start();
        if scanner.continues() || text.is_empty() || text.starts_with('#') {
            if scanner.continues() {
                opens_block = scanner.read(line);
            }
            out.push(line.to_owned());
            continue;
        }
        let indent = line.len() - text.len();
        let top = *stack.last().unwrap_or(&0);
        let mut at = indent;
        if opens_block {
            if indent > top {
                stack.push(indent);
            }
        } else if indent > top {
            at = top;
        } else {
            while stack.len() > 1 && stack.last().is_some_and(|&level| level > indent) {
                stack.pop();
            }
            at = *stack.last().unwrap_or(&0);
        }
        if at != indent {
            moved += 1;
        }
        out.push(format!("{}{text}", " ".repeat(at)));
        opens_block = scanner.read(text);
    }
    let mut repaired = out.join("\n");
    if code.ends_with('\n') {
        repaired.push('\n');
    }
    if moved == 0 || !crate::checks::structural(&repaired).passed {
        return None;
    }
    *code = repaired;
    Some(format!(
        "moved {moved} line(s) whose indentation matched no open block to the nearest one"
    ))
}

/// Gives a block whose body is only comments a `pass`: small models write
/// `try:\n    # code that triggers the bug\nexcept …`, which Python refuses (tree-sitter
/// does not). Only a header followed by deeper comment lines, or by nothing, is filled: a
/// header followed at once by a shallower statement is a slip of another kind.
pub(crate) fn fill_empty_blocks(code: &mut String) -> Option<String> {
    let lines: Vec<&str> = code.lines().collect();
    let mut scanner = Scanner::default();
    // Each header's line index and indentation, with whether a deeper comment followed it.
    let mut open: Option<(usize, usize, bool)> = None;
    let mut fill: Vec<(usize, usize)> = Vec::new();
    // The indentation of the statement being read (a header may span several lines).
    let mut statement = 0;
    for (i, line) in lines.iter().enumerate() {
        let text = line.trim_start();
        let indent = line.len() - text.len();
        if scanner.continues() {
            if scanner.read(line) {
                open = Some((i, statement, false));
            }
            continue;
        }
        if text.is_empty() {
            continue;
        }
        if text.starts_with('#') {
            if let Some((_, header, commented)) = open.as_mut() {
                *commented |= indent > *header;
            }
            continue;
        }
        if let Some((at, header, commented)) = open.take()
            && indent <= header
            && commented
        {
            fill.push((at, header));
        }
        statement = indent;
        if scanner.read(line) {
            open = Some((i, indent, false));
        }
    }
    if let Some((at, header, _)) = open {
        fill.push((at, header));
    }
    if fill.is_empty() {
        return None;
    }
    let mut out: Vec<String> = Vec::with_capacity(lines.len() + fill.len());
    for (i, line) in lines.iter().enumerate() {
        out.push((*line).to_owned());
        if let Some((_, header)) = fill.iter().find(|(at, _)| *at == i) {
            out.push(format!("{}pass", " ".repeat(header + 4)));
        }
    }
    let mut filled = out.join("\n");
    if code.ends_with('\n') {
        filled.push('\n');
    }
    if !crate::checks::structural(&filled).passed {
        return None;
    }
    *code = filled;
    Some(format!(
        "gave {} block(s) holding only comments a `pass`, which Python needs",
        fill.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_off_by_a_space_joins_the_nearest_block() {
        // From a pasted training loop: the print is one space deeper than its loop's body.
        let mut code =
            "for epoch in range(3):\n     for x in data:\n         step(x)\n      print(epoch)\nprint('done')\n"
                .to_owned();
        let edit = repair_indentation(&mut code).unwrap();
        assert_eq!(
            code,
            "for epoch in range(3):\n     for x in data:\n         step(x)\n     print(epoch)\nprint('done')\n"
        );
        assert!(edit.starts_with("moved 1 line(s)"), "{edit}");
        // An unexpected indent after a plain statement, with a bracket and a docstring
        // whose lines are left as they are.
        let mut code =
            "x = f(1,\n          2)\n  y = 2 + \\\n      3\ndef g():\n    \"\"\"Doc\n  text\"\"\"\n    return y\n"
                .to_owned();
        repair_indentation(&mut code).unwrap();
        assert_eq!(
            code,
            "x = f(1,\n          2)\ny = 2 + \\\n      3\ndef g():\n    \"\"\"Doc\n  text\"\"\"\n    return y\n"
        );
    }

    #[test]
    fn code_that_parses_or_cannot_be_repaired_is_left_alone() {
        let fine = "if x:\n    y = 1 + \\\n  2\nprint(y, [\n 1])\n";
        assert!(repair_indentation(&mut fine.to_owned()).is_none());
        // A block header with no body is not an indentation slip.
        let broken = "if x:\nprint(y)\n";
        let mut code = broken.to_owned();
        assert!(repair_indentation(&mut code).is_none());
        assert_eq!(code, broken);
    }

    #[test]
    fn a_block_of_comments_only_gets_a_pass() {
        // Development case 13 with the 0.5B: its appended lines never ran.
        let mut code = "x = 1\ntry:\n    # Code to reproduce the bug\nexcept Exception as e:\n    print(e)\nfor i in range(2):\n    # nothing yet\n".to_owned();
        let edit = fill_empty_blocks(&mut code).unwrap();
        assert_eq!(
            code,
            "x = 1\ntry:\n    pass\n    # Code to reproduce the bug\nexcept Exception as e:\n    print(e)\nfor i in range(2):\n    pass\n    # nothing yet\n"
        );
        assert!(edit.starts_with("gave 2 block(s)"), "{edit}");
        // A header over several lines gets its body at the statement's indentation.
        let mut code = "def f(a,\n      b):\n    # todo\nprint(1)\n".to_owned();
        fill_empty_blocks(&mut code).unwrap();
        assert_eq!(code, "def f(a,\n      b):\n    pass\n    # todo\nprint(1)\n");
        // Bodies, dict literals and a header followed at once by a shallower line are left alone.
        for fine in [
            "if x:\n    y = 1\n",
            "d = {\n    'a': 1,\n}\n",
            "if x:\nprint(y)\n",
            "s = 'a:'\n",
        ] {
            assert!(fill_empty_blocks(&mut fine.to_owned()).is_none(), "{fine}");
        }
    }
}
