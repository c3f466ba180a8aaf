use super::layout::TAB_ERROR;
use super::*;

const PROGRAM: &str = "class Stack:\n    def push(self, x):\n        self.items.append(x)  # keep\n\n\ndef main():\n    s = Stack()\n    if s:\n        print(\"hi\", 42)\n    elif True:\n        pass\n";

#[test]
fn indentation_and_bracket_errors_are_named_where_cpython_names_them() {
    let problem = |text: &str| layout_problem(text).map(|p| (p.line, p.column, p.message));
    assert_eq!(problem("x = 1\n    y = 2\n"), Some((2, 5, "unexpected indent".into())));
    assert_eq!(
        problem("if x:\n        a = 1\n    b = 2\n"),
        Some((3, 5, "unindent does not match any outer indentation level".into()))
    );
    assert_eq!(
        problem("if x:\n\ta = 1\n        b = 2\n"),
        Some((3, 9, TAB_ERROR.into()))
    );
    assert_eq!(
        problem("if x:\nprint(x)\n"),
        Some((2, 1, "expected an indented block after line 1".into()))
    );
    // CPython names the line of the bracket, not where the parse gave up.
    assert_eq!(
        problem("total = sum([1, 2\nprint(total)\n"),
        Some((1, 13, "`[` was never closed".into()))
    );
    assert_eq!(
        problem("x = (1, 2]\n"),
        Some((1, 10, "closing `]` does not match opening `(`".into()))
    );
    assert_eq!(problem("x = 1)\n"), Some((1, 6, "unmatched `)`".into())));
    // Brackets in strings and comments, continuations and a tab block do not confuse it.
    let fine = r#"def f(a,
      b):  # (
    s = '''(
  ['''
    t = "a)" + 'b\'('
    return (a +
        b) \
        + 1


if f(1, 2):
    pass
else:
	pass
"#;
    assert_eq!(problem(fine), None);
    // A header still being typed is not an error yet.
    assert_eq!(problem("for i in range(3):\n"), None);
    let with_error = SyntaxDocument::new("x = 1\n    y = (2\n");
    let shown: Vec<u32> = with_error.analysis().shown_problems().map(|p| p.line).collect();
    assert_eq!(shown.first(), Some(&2));
}

#[test]
fn every_example_parses_without_problems() {
    for example in crate::playground::examples::EXAMPLES {
        let analysis = SyntaxDocument::new(example.code).analyse();
        assert!(analysis.problems.is_empty(), "{}: {:?}", example.id, analysis.problems);
        assert_eq!(analysis.layout, None, "{}", example.id);
    }
}

#[test]
fn highlighting_marks_keywords_names_strings_and_comments() {
    let doc = SyntaxDocument::new(PROGRAM);
    let html = doc.highlight_html();
    assert!(html.starts_with(r#"<span class="tok-keyword">class</span> <span class="tok-class">Stack</span>:"#));
    assert!(html.contains(r#"<span class="tok-function">push</span>"#));
    assert!(html.contains(r#"<span class="tok-self">self</span>"#));
    assert!(html.contains(r#"<span class="tok-call">append</span>"#));
    assert!(html.contains(r#"<span class="tok-comment"># keep</span>"#));
    assert!(html.contains(r#"<span class="tok-builtin">print</span>"#));
    assert!(html.contains(r#"<span class="tok-string">&quot;</span><span class="tok-string">hi</span>"#));
    assert!(html.contains(r#"<span class="tok-number">42</span>"#));
    assert!(!html.contains("syntax-error"));
    // The text is all there, in order.
    let plain = html
        .split('<')
        .map(|part| part.split_once('>').map_or(part, |(_, t)| t))
        .collect::<String>()
        .replace("&quot;", "\"");
    assert_eq!(plain, format!("{PROGRAM}\n"));
}

#[test]
fn outline_lists_classes_methods_and_functions() {
    let analysis = SyntaxDocument::new(PROGRAM).analyse();
    let outline: Vec<_> = analysis
        .outline
        .iter()
        .map(|i| (i.kind, i.name.as_str(), i.line, i.depth))
        .collect();
    assert_eq!(
        outline,
        vec![
            (OutlineKind::Class, "Stack", 1, 0),
            (OutlineKind::Method, "push", 2, 1),
            (OutlineKind::Function, "main", 6, 0),
        ]
    );
}

#[test]
fn breakpoints_go_on_lines_that_start_statements() {
    let analysis = SyntaxDocument::new(PROGRAM).analyse();
    let lines: Vec<u32> = analysis.statement_lines.iter().copied().collect();
    assert_eq!(lines, vec![1, 2, 3, 6, 7, 8, 9, 10, 11]);
    assert_eq!(analysis.line_count, 12);
    assert!(analysis.problems.is_empty());
}

#[test]
fn syntax_errors_are_listed_and_underlined() {
    let doc = SyntaxDocument::new("def f(:\n    return 1\n\nx = (1 +\n");
    let analysis = doc.analyse();
    assert!(!analysis.problems.is_empty(), "{analysis:?}");
    assert_eq!(analysis.problems[0].line, 1, "{analysis:?}");
    assert!(doc.highlight_html().contains("syntax-error") || doc.highlight_html().contains("missing"));

    assert_eq!(analysis.problems[0].message, "missing `)`");
    assert!(analysis.problems.iter().any(|p| p.line == 4), "{analysis:?}");
    let html = doc.highlight_html();
    assert!(
        html.contains(r#"<span class="missing" title="missing )"></span>"#),
        "{html}"
    );
    assert!(html.contains(r#"<span class="syntax-error">x</span>"#), "{html}");
}

#[test]
fn incremental_updates_match_a_fresh_parse() {
    let mut doc = SyntaxDocument::new(PROGRAM);
    let edits = [
        PROGRAM.replace("push", "pushé"),
        PROGRAM.replace("    if s:\n", "    if s:\n        t = 1\n"),
        PROGRAM.replace("42", "4"),
        String::new(),
        "x = 'ü'\n".to_owned(),
        PROGRAM.to_owned(),
    ];
    for text in edits {
        assert!(doc.update(&text));
        let fresh = SyntaxDocument::new(&text);
        assert_eq!(doc.tree().root_node().to_sexp(), fresh.tree().root_node().to_sexp());
        assert_eq!(doc.highlight_html(), fresh.highlight_html());
        assert_eq!(doc.analysis(), &fresh.analyse());
    }
    assert!(!doc.update(PROGRAM));
}

/// Typing a program character by character, then deleting from the middle: after
/// every keystroke the incremental highlighting and analysis equal a fresh parse's.
#[test]
fn keystroke_by_keystroke_the_incremental_view_is_exact() {
    let program = "class A:\n    def f(self, x):\n        '''doc\n        string'''\n        return [x,\n                1]  # c\n\n\ndef g(\"é\"):\n    try:\n        pass\n    except E:\n        g(1)\nprint(g, A().f(2))\n";
    let check = |doc: &mut SyntaxDocument, text: &str| {
        let before = doc.analysis().clone();
        let changes = doc.edit(text);
        let fresh = SyntaxDocument::new(text);
        assert_eq!(
            doc.highlight_html(),
            fresh.highlight_html(),
            "after the edit to {text:?}"
        );
        assert_eq!(doc.analysis(), &fresh.analyse(), "after the edit to {text:?}");
        if let Some(changes) = changes {
            assert_eq!(
                changes.analysis_changed,
                !before.same_apart_from_offsets(doc.analysis())
            );
        }
    };
    let mut doc = SyntaxDocument::new("");
    let mut typed = String::new();
    for c in program.chars() {
        typed.push(c);
        check(&mut doc, &typed);
    }
    let mut text = program.to_owned();
    while !text.is_empty() {
        let mut at = text.len() / 3;
        while !text.is_char_boundary(at) {
            at += 1;
        }
        text.remove(at.min(text.len() - 1));
        check(&mut doc, &text);
    }
    for (from, to) in [
        ("return", "yield"),
        ("(self, x)", "(self, x"),
        ("'''doc", "doc"),
        ("\n\n\n", "\n"),
        ("try:", "try"),
    ] {
        let edited = program.replace(from, to);
        doc = SyntaxDocument::new(program);
        check(&mut doc, &edited);
        check(&mut doc, program);
    }
}

/// Random single edits of the gallery's programs (a fixed-seed generator): the
/// incremental view always equals a fresh parse's.
#[test]
fn random_edits_keep_the_incremental_view_exact() {
    const PIECES: [&str; 12] = [
        "(",
        ")",
        ":",
        "\n",
        "    ",
        "x",
        "'",
        "\"\"\"",
        "def ",
        "#",
        "é",
        "\n    pass\n",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for example in crate::playground::examples::EXAMPLES {
        let mut doc = SyntaxDocument::new(example.code);
        let mut text = example.code.to_owned();
        for _ in 0..40 {
            let mut at = next(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            if next(3) == 0 && at < text.len() {
                let mut end = (at + 1 + next(8)).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                text.replace_range(at..end, "");
            } else {
                text.insert_str(at, PIECES[next(PIECES.len())]);
            }
            doc.update(&text);
            let fresh = SyntaxDocument::new(&text);
            assert_eq!(doc.highlight_html(), fresh.highlight_html(), "{text:?}");
            assert_eq!(doc.analysis(), &fresh.analyse(), "{text:?}");
        }
    }
}

#[test]
fn a_keystroke_inside_a_line_rehighlights_that_line_only() {
    let mut doc = SyntaxDocument::new(PROGRAM);
    let changes = doc.edit(&PROGRAM.replace("s = Stack()", "st = Stack()")).unwrap();
    assert_eq!(
        (changes.start_row, changes.removed_rows, changes.inserted_rows),
        (6, 1, 1)
    );
    assert_eq!(changes.highlighted, vec![6..7]);
    assert!(!changes.analysis_changed);
    let changes = doc
        .edit(&PROGRAM.replace("s = Stack()", "st = Stack()\n    t = 1"))
        .unwrap();
    assert_eq!((changes.removed_rows, changes.inserted_rows), (1, 2));
    assert!(changes.analysis_changed);
}

#[test]
fn edits_are_the_changed_middle() {
    let edit = single_edit("abcdef", "abXYef").unwrap();
    assert_eq!((edit.start_byte, edit.old_end_byte, edit.new_end_byte), (2, 4, 4));
    let edit = single_edit("a\nb", "a\nbc").unwrap();
    assert_eq!(edit.start_position, Point { row: 1, column: 1 });
    assert_eq!(edit.new_end_position, Point { row: 1, column: 2 });
    let edit = single_edit("é", "è").unwrap();
    assert_eq!((edit.start_byte, edit.old_end_byte), (0, 2));
    assert!(single_edit("x", "x").is_none());
}

#[test]
fn offsets_convert_to_textarea_positions() {
    assert_eq!(utf16_offset("a😀b", 5), 3);
    assert_eq!(line_start("a\nbc\nd", 3), 5);
    assert_eq!(line_start("a\nbc\nd", 1), 0);
}
