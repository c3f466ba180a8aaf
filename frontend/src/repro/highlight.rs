//! A small Python token highlighter for the reproduction page. The playground's
//! tree-sitter stays out of this bundle (it would triple its size); the agent's scripts
//! only need keywords, strings, comments and numbers told apart.

/// What a piece of a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    Plain,
    Keyword,
    Builtin,
    String,
    Comment,
    Number,
}

impl Token {
    /// The class the playground's stylesheet colours (`static/style.css`).
    pub fn class(self) -> &'static str {
        match self {
            Self::Plain => "",
            Self::Keyword => "tok-keyword",
            Self::Builtin => "tok-builtin",
            Self::String => "tok-string",
            Self::Comment => "tok-comment",
            Self::Number => "tok-number",
        }
    }
}

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];
const BUILTINS: &[&str] = &[
    "print",
    "len",
    "range",
    "int",
    "float",
    "str",
    "list",
    "dict",
    "set",
    "tuple",
    "isinstance",
    "sum",
    "min",
    "max",
    "abs",
    "enumerate",
    "zip",
    "open",
    "super",
    "self",
];

/// One line's pieces, in order; joined they are the line.
pub type Line = Vec<(Token, String)>;

/// Splits `code` into lines of tokens. Triple-quoted strings may span lines.
pub fn highlight(code: &str) -> Vec<Line> {
    let mut open_triple: Option<&'static str> = None;
    code.split('\n')
        .map(|line| highlight_line(line, &mut open_triple))
        .collect()
}

fn push(out: &mut Line, token: Token, text: &str) {
    if text.is_empty() {
        return;
    }
    match out.last_mut() {
        Some((last, s)) if *last == token => s.push_str(text),
        _ => out.push((token, text.to_owned())),
    }
}

fn highlight_line(line: &str, open_triple: &mut Option<&'static str>) -> Line {
    let mut out = Line::new();
    let mut rest = line;
    if let Some(quote) = *open_triple {
        let Some(end) = rest.find(quote) else {
            push(&mut out, Token::String, rest);
            return out;
        };
        push(&mut out, Token::String, &rest[..end + 3]);
        rest = &rest[end + 3..];
        *open_triple = None;
    }
    while let Some(c) = rest.chars().next() {
        if c == '#' {
            push(&mut out, Token::Comment, rest);
            break;
        }
        if c == '"' || c == '\'' {
            let triple = if c == '"' { "\"\"\"" } else { "'''" };
            if rest.starts_with(triple) {
                let Some(end) = rest[3..].find(triple) else {
                    push(&mut out, Token::String, rest);
                    *open_triple = Some(triple);
                    break;
                };
                push(&mut out, Token::String, &rest[..end + 6]);
                rest = &rest[end + 6..];
                continue;
            }
            let end = string_end(rest, c);
            push(&mut out, Token::String, &rest[..end]);
            rest = &rest[end..];
            continue;
        }
        if c.is_ascii_digit() {
            let end = rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '.' || ch == '_'))
                .unwrap_or(rest.len());
            push(&mut out, Token::Number, &rest[..end]);
            rest = &rest[end..];
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let end = rest
                .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                .unwrap_or(rest.len());
            let word = &rest[..end];
            let token = if KEYWORDS.contains(&word) {
                Token::Keyword
            } else if BUILTINS.contains(&word) {
                Token::Builtin
            } else {
                Token::Plain
            };
            push(&mut out, token, word);
            rest = &rest[end..];
            continue;
        }
        push(&mut out, Token::Plain, &rest[..c.len_utf8()]);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The byte just after a one-line string that starts `text` with `quote` (escapes
/// honoured; an unterminated string runs to the end of the line).
fn string_end(text: &str, quote: char) -> usize {
    let mut escaped = false;
    for (i, ch) in text.char_indices().skip(1) {
        if escaped {
            escaped = false;
        } else if ch == '\\' {
            escaped = true;
        } else if ch == quote {
            return i + ch.len_utf8();
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(line: &Line) -> Vec<(Token, &str)> {
        line.iter().map(|(t, s)| (*t, s.as_str())).collect()
    }

    #[test]
    fn lines_split_into_tokens_that_join_back() {
        let code = "import numpy as np  # arrays\nx = np.log(0.0) + 'a\\'b'\n";
        let lines = highlight(code);
        assert_eq!(lines.len(), 3);
        assert_eq!(
            kinds(&lines[0]),
            vec![
                (Token::Keyword, "import"),
                (Token::Plain, " numpy "),
                (Token::Keyword, "as"),
                (Token::Plain, " np  "),
                (Token::Comment, "# arrays"),
            ]
        );
        assert!(kinds(&lines[1]).contains(&(Token::Number, "0.0")));
        assert!(kinds(&lines[1]).contains(&(Token::String, "'a\\'b'")));
        let joined: Vec<String> = lines
            .iter()
            .map(|l| l.iter().map(|(_, s)| s.as_str()).collect())
            .collect();
        assert_eq!(joined.join("\n"), code);
    }

    #[test]
    fn triple_quoted_strings_span_lines() {
        let lines = highlight("s = \"\"\"one\ntwo # not a comment\nthree\"\"\" + x");
        assert_eq!(kinds(&lines[1]), vec![(Token::String, "two # not a comment")]);
        assert_eq!(lines[2][0], (Token::String, "three\"\"\"".to_owned()));
        assert_eq!(lines[2].last().unwrap(), &(Token::Plain, " + x".to_owned()));
    }
}
