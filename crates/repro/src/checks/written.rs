//! What a script prints from its own source (pure): the claims and numbers written in its
//! `print` calls. A run shows the bug through what the program computes and what the
//! libraries print, never through what the script says: `print("negative values become
//! zero:", n)` says `negative` and `zero` whatever `n` is, and `print("observed", [0.4988])`
//! prints the report's value without computing it. So the run is read with that text
//! blanked before its symptom is classified and its values are compared with the report's.
//! A label that only names a quantity (`print("loss", loss)`, `print("shape:", x.shape)`)
//! stays: what follows it is computed, and the name says which quantity it is.

use std::sync::LazyLock;

use regex::Regex;
use tree_sitter::Node;

use crate::edits::OBSERVER_MARK;
use crate::report::makes_a_claim;
use replayground_exec::python::parse;

/// The shortest piece of written text that is blanked: shorter ones (`=`, `, `, `1`) are
/// separators and small numbers a computed value could equally be.
const MIN_LITERAL_CHARS: usize = 3;

/// The text the script's `print` calls write from its source, longest first: each string's
/// parts between escapes (an f-string's between its `{…}` fields) that make a claim
/// ([`makes_a_claim`]), and each number, of at least [`MIN_LITERAL_CHARS`] characters. The
/// agent's own observer (appended after [`OBSERVER_MARK`]) is not the script's and is left
/// out.
pub(crate) fn printed_literals(code: &str) -> Vec<String> {
    let script = code.find(OBSERVER_MARK).map_or(code, |at| &code[..at]);
    let Some(tree) = parse(script) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    collect_prints(tree.root_node(), script.as_bytes(), &mut found);
    found.sort_by(|a: &String, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    found.dedup();
    found
}

fn collect_prints(node: Node<'_>, source: &[u8], found: &mut Vec<String>) {
    if node.kind() == "call"
        && node
            .child_by_field_name("function")
            .is_some_and(|f| f.utf8_text(source) == Ok("print"))
        && let Some(arguments) = node.child_by_field_name("arguments")
    {
        collect_literals(arguments, source, found);
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        collect_prints(child, source, found);
    }
}

/// A backslash escape inside a string's source text (`\n`, `\t`, `\x41`, `\N{...}`).
static ESCAPE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\\(?:N\{[^}]*\}|x[0-9a-fA-F]{2}|.)").expect("a valid pattern"));

fn collect_literals(node: Node<'_>, source: &[u8], found: &mut Vec<String>) {
    let text = node.utf8_text(source).unwrap_or_default();
    match node.kind() {
        "string_content" => {
            for piece in ESCAPE.split(text).filter(|piece| makes_a_claim(piece)) {
                keep(piece, found);
            }
            return;
        }
        "integer" | "float" => {
            keep(text, found);
            return;
        }
        // A field's expression is computed, not written (`{loss:.4f}`).
        "interpolation" => return,
        _ => {}
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        collect_literals(child, source, found);
    }
}

fn keep(piece: &str, found: &mut Vec<String>) {
    let piece = piece.trim();
    if piece.chars().count() >= MIN_LITERAL_CHARS && piece.chars().any(char::is_alphanumeric) {
        found.push(piece.to_owned());
    }
}

/// `output` with every occurrence of a written literal replaced by a space, where it stands
/// as a whole (a literal `loss` is not cut out of Keras's own `val_loss`). `literals` are
/// longest first, as [`printed_literals`] gives them.
pub(crate) fn without_literals(output: &str, literals: &[String]) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut text = output.to_owned();
    for literal in literals {
        let starts_word = word(literal.chars().next());
        let ends_word = word(literal.chars().last());
        let mut kept = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find(literal.as_str()) {
            let end = at + literal.len();
            let cut_from_a_word =
                starts_word && word(rest[..at].chars().last()) || ends_word && word(rest[end..].chars().next());
            kept.push_str(&rest[..at]);
            kept.push_str(if cut_from_a_word { literal } else { " " });
            rest = &rest[end..];
        }
        kept.push_str(rest);
        text = kept;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_claims_and_numbers_of_print_calls_are_collected_and_computed_fields_are_not() {
        let code = concat!(
            "label = 'negative values'\n",
            "print(\"Predicted values are wrong: \\n\", F)\n",
            "print(f\"all negative become zero: {n:.4f} of {total}\")\n",
            "print('observed', [0.49911702], 7)\n",
            "print('loss', loss, 'shape:', x.shape)\n",
            "model.compile(loss='mean_squared_error', metrics=['accuracy'])\n",
        );
        let literals = printed_literals(code);
        // Not the labels that only name a quantity, nor strings outside `print`.
        assert_eq!(
            literals,
            ["Predicted values are wrong:", "all negative become zero:", "0.49911702"],
            "{literals:?}"
        );
    }

    #[test]
    fn the_agents_observer_is_not_the_scripts_text() {
        let code = format!("print('loss is nan', 0.125)\n\n{OBSERVER_MARK}\nprint(\"replayground: has nan\", name)\n");
        assert_eq!(printed_literals(&code), ["loss is nan", "0.125"]);
    }

    #[test]
    fn written_text_is_blanked_where_it_stands_whole() {
        let literals = vec!["negative become zero:".to_owned(), "loss".to_owned()];
        let output = "negative become zero: 3\nloss nan\nEpoch 1 - loss: 0.5 - val_loss: 0.7";
        assert_eq!(
            without_literals(output, &literals),
            "  3\n  nan\nEpoch 1 -  : 0.5 - val_loss: 0.7"
        );
    }
}
