//! Where a frame's next line event can be, read from the code's blocks (no run).
//!
//! After a line runs, the same frame's next line event is the next statement of its block,
//! or what the block's end leads to (a loop's header, the statement after an `if`, an
//! `else` or `finally` body, a `with` line on exit); a compound header leads into one of
//! its bodies or past them; `break`, `continue` and `return` leave through the enclosing
//! loops, `finally` bodies and `with` lines. Every line of the statement itself stays
//! possible (a statement written over several lines fires on several). Whatever the
//! blocks cannot tell (a `match`, a line between clauses) is `None`: not bounded.

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::line_of;

/// Lines, or `None` when the code cannot tell.
type Lines = Option<BTreeSet<u32>>;

fn union(a: Lines, b: Lines) -> Lines {
    let mut a = a?;
    a.extend(b?);
    Some(a)
}

/// The lines of `node` where an event can fire: those where one of its tokens starts.
/// Python places a string at its first line, so a line that only continues a string (a
/// triple-quoted string's later lines, its closing quotes) never fires, nor does a comment's.
pub(super) fn span(node: Node<'_>) -> BTreeSet<u32> {
    let (first, last) = (node.start_position().row, node.end_position().row);
    if first == last {
        return BTreeSet::from([line_of(first)]);
    }
    let mut lines = BTreeSet::new();
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "string_content" | "string_end" | "comment" => {}
            _ if node.child_count() == 0 => {
                lines.insert(line_of(node.start_position().row));
            }
            _ => {
                let mut cursor = node.walk();
                stack.extend(node.children(&mut cursor));
            }
        }
    }
    lines
}

/// The lines of a statement or header that can fire again after one of them: all of
/// them when it is written over several lines, none when it is one line.
fn again(lines: BTreeSet<u32>) -> BTreeSet<u32> {
    if lines.len() > 1 { lines } else { BTreeSet::new() }
}

pub(super) fn is_statement(node: Node<'_>) -> bool {
    let kind = node.kind();
    node.is_named()
        && (kind.ends_with("_statement")
            || matches!(
                kind,
                "function_definition" | "class_definition" | "decorated_definition"
            ))
}

pub(super) fn statements(block: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = block.walk();
    block.named_children(&mut cursor).filter(|n| is_statement(*n)).collect()
}

pub(super) fn field<'t>(node: Node<'t>, name: &str) -> Option<Node<'t>> {
    node.child_by_field_name(name)
}

/// `node`'s named children but comments.
pub(super) fn named(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect()
}

/// The child clauses of `node` of `kind`, in order.
fn clauses<'t>(node: Node<'t>, kinds: &[&str]) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|n| kinds.contains(&n.kind()))
        .collect()
}

/// The block a clause (`else`, `except`, `finally`) holds.
fn clause_block(clause: Node<'_>) -> Option<Node<'_>> {
    field(clause, "body")
        .or_else(|| field(clause, "consequence"))
        .or_else(|| clauses(clause, &["block"]).into_iter().next())
}

/// A compound statement's header: from its first line to the line before its body.
fn header(statement: Node<'_>, body: Option<Node<'_>>) -> BTreeSet<u32> {
    let first = line_of(statement.start_position().row);
    let last = body.map_or(first, |b| line_of(b.start_position().row).saturating_sub(1).max(first));
    (first..=last).collect()
}

/// Where a `while` loop goes after a turn of its body (its end, or a `continue`): its
/// header, where the condition is tested again; straight into the body too when the
/// condition may be a constant the compiler drops (`while True:`, `while __debug__:`).
fn next_turn(statement: Node<'_>, body: Option<Node<'_>>) -> Lines {
    let again = Some(header(statement, body));
    let mut stack: Vec<Node<'_>> = field(statement, "condition").into_iter().collect();
    let mut tested = false;
    while let Some(node) = stack.pop() {
        // `__debug__` is the one name the compiler folds: the tree holds no text here,
        // so a name of its length may be it.
        tested |= node.kind() == "identifier" && node.end_byte() - node.start_byte() != "__debug__".len();
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    if tested { again } else { union(again, entry_of(body)) }
}

/// Whether a statement compiles to nothing a line event could fire on.
pub(super) fn is_silent(statement: Node<'_>) -> bool {
    match statement.kind() {
        "global_statement" | "nonlocal_statement" | "pass_statement" => true,
        "expression_statement" => {
            statement.named_child_count() == 1
                && statement
                    .named_child(0)
                    .is_some_and(|e| matches!(e.kind(), "string" | "integer" | "float" | "true" | "false" | "none"))
        }
        _ => false,
    }
}

/// The first line events of `statement`.
fn entry(statement: Node<'_>) -> Lines {
    match statement.kind() {
        // The first decorator is evaluated first: its line, then the others and the header.
        "decorated_definition" => Some(BTreeSet::from([line_of(statement.start_position().row)])),
        "function_definition"
        | "class_definition"
        | "if_statement"
        | "for_statement"
        | "while_statement"
        | "with_statement" => Some(header_of(statement)),
        "try_statement" => union(Some(header_of(statement)), entry_of(field(statement, "body"))),
        "match_statement" => None,
        _ if is_silent(statement) => union(Some(span(statement)), next_of(statement)),
        _ => Some(span(statement)),
    }
}

/// The first line events of a block.
pub(super) fn entry_of(block: Option<Node<'_>>) -> Lines {
    statements(block?).first().copied().map_or(Some(BTreeSet::new()), entry)
}

/// Where control goes once `statement` completes normally (empty: the frame returns).
fn next_of(statement: Node<'_>) -> Lines {
    let block = statement.parent()?;
    if block.kind() == "decorated_definition" {
        return next_of(block);
    }
    let siblings = statements(block);
    let at = siblings.iter().position(|s| s.id() == statement.id())?;
    if let Some(next) = siblings.get(at + 1) {
        return entry(*next);
    }
    if block.kind() == "module" {
        return Some(BTreeSet::new());
    }
    let owner = block.parent()?;
    match owner.kind() {
        "function_definition" | "class_definition" => Some(BTreeSet::new()),
        "for_statement" => Some(header(owner, Some(block))),
        "while_statement" => next_turn(owner, Some(block)),
        "if_statement" => next_of(owner),
        "with_statement" => union(Some(header(owner, Some(block))), next_of(owner)),
        "try_statement" => after_try_part(owner, "else_clause"),
        "elif_clause" | "else_clause" => {
            let statement = owner.parent()?;
            match statement.kind() {
                "try_statement" => after_try_part(statement, "finally_clause"),
                _ => next_of(statement),
            }
        }
        "except_clause" | "except_group_clause" => after_try_part(owner.parent()?, "finally_clause"),
        "finally_clause" => next_of(owner.parent()?),
        _ => None,
    }
}

/// After a `try` statement's body (`from` = `else_clause`) or one of its handlers or its
/// `else` (`from` = `finally_clause`): its `else`, its `finally`, or what follows it.
fn after_try_part(try_statement: Node<'_>, from: &str) -> Lines {
    let order = ["else_clause", "finally_clause"];
    let start = order.iter().position(|k| *k == from)?;
    for kind in &order[start..] {
        if let Some(clause) = clauses(try_statement, &[kind]).first() {
            return entry_of(clause_block(*clause));
        }
    }
    next_of(try_statement)
}

/// The `finally` bodies and `with` lines a jump out of `statement` passes, up to the
/// first ancestor of `until`'s kinds (or the frame's scope).
fn exits(statement: Node<'_>, until: &[&str]) -> Lines {
    let mut lines = BTreeSet::new();
    let mut node = statement;
    while let Some(parent) = node.parent() {
        match parent.kind() {
            kind if until.contains(&kind) => break,
            "function_definition" | "class_definition" | "lambda" | "module" => break,
            "try_statement" => {
                if let Some(clause) = clauses(parent, &["finally_clause"]).first()
                    && node.kind() != "finally_clause"
                {
                    lines.extend(entry_of(clause_block(*clause))?);
                }
            }
            "with_statement" => lines.extend(header(parent, field(parent, "body"))),
            _ => {}
        }
        node = parent;
    }
    Some(lines)
}

/// The nearest loop around `statement` within its frame.
fn enclosing_loop(statement: Node<'_>) -> Option<Node<'_>> {
    let mut node = statement.parent()?;
    loop {
        match node.kind() {
            "for_statement" | "while_statement" => return Some(node),
            "function_definition" | "class_definition" | "lambda" | "module" => return None,
            _ => node = node.parent()?,
        }
    }
}

/// Where a line event at `line` of a simple statement leads.
fn after_simple(statement: Node<'_>) -> Lines {
    let own = Some(again(span(statement)));
    match statement.kind() {
        "return_statement" | "raise_statement" => union(own, exits(statement, &[])),
        "break_statement" => {
            let target = enclosing_loop(statement)?;
            union(
                union(own, next_of(target)),
                exits(statement, &["for_statement", "while_statement"]),
            )
        }
        "continue_statement" => {
            let target = enclosing_loop(statement)?;
            let body = field(target, "body");
            let back = match target.kind() {
                "while_statement" => next_turn(target, body),
                _ => Some(header(target, body)),
            };
            union(
                union(own, back),
                exits(statement, &["for_statement", "while_statement"]),
            )
        }
        _ => union(own, next_of(statement)),
    }
}

/// An `if` statement's parts (its own header, then each `elif` and `else` clause), each
/// with its block.
fn if_parts(statement: Node<'_>) -> Vec<(Node<'_>, Option<Node<'_>>)> {
    let mut parts = vec![(statement, field(statement, "consequence"))];
    for clause in clauses(statement, &["elif_clause", "else_clause"]) {
        parts.push((clause, clause_block(clause)));
    }
    parts
}

/// Where control goes when the condition of `parts[k]` of the `if` statement is false:
/// the next `elif`'s header, the `else` block, or past the statement.
fn past_part(statement: Node<'_>, parts: &[(Node<'_>, Option<Node<'_>>)], k: usize) -> Lines {
    match parts.get(k + 1) {
        Some((next, block)) if next.kind() == "elif_clause" => Some(header(*next, *block)),
        Some((_, block)) => entry_of(*block),
        None => next_of(statement),
    }
}

/// Where control goes when a loop ends by its own test: its `else` block, or past it.
fn past_loop(statement: Node<'_>) -> Lines {
    match clauses(statement, &["else_clause"]).first() {
        Some(clause) => entry_of(clause_block(*clause)),
        None => next_of(statement),
    }
}

/// Where a line event at `line` of the compound `statement` (in its header) leads.
fn after_header(statement: Node<'_>, line: u32) -> Lines {
    let body = field(statement, "body");
    match statement.kind() {
        "if_statement" => {
            let parts = if_parts(statement);
            let k = parts.iter().position(|(p, b)| header(*p, *b).contains(&line))?;
            let (part, block) = parts[k];
            if part.kind() == "else_clause" {
                return None;
            }
            let otherwise = past_part(statement, &parts, k);
            union(union(Some(again(header(part, block))), entry_of(block)), otherwise)
        }
        "for_statement" | "while_statement" => union(
            union(Some(again(header(statement, body))), entry_of(body)),
            past_loop(statement),
        ),
        "with_statement" | "try_statement" => union(Some(again(header(statement, body))), entry_of(body)),
        "function_definition" | "class_definition" | "decorated_definition" => {
            union(Some(again(header_of(statement))), next_of(statement))
        }
        _ => None,
    }
}

/// Where a line event at a one-line `if`, `elif` or `while` header (or a `for` header)
/// leads when `decide` tells its condition's value (or whether the loop takes a turn): into its block, or past it (the next clause, the `else`
/// block, or what follows the statement). `None` when it does not tell.
pub(super) fn after_decided(root: Node<'_>, line: u32, decide: &dyn Fn(Node<'_>) -> Option<bool>) -> Lines {
    let statement = *statements_at(root, line).last()?;
    // A block on its header's own line fires no line event of its own.
    let below = |block: Option<Node<'_>>| block.is_some_and(|b| line_of(b.start_position().row) > line);
    match statement.kind() {
        "if_statement" => {
            let parts = if_parts(statement);
            let k = parts.iter().position(|(p, b)| header(*p, *b).contains(&line))?;
            let (part, block) = parts[k];
            if part.kind() == "else_clause" || !below(block) || line_of(part.start_position().row) != line {
                return None;
            }
            if decide(field(part, "condition")?)? {
                return entry_of(block);
            }
            past_part(statement, &parts, k)
        }
        "while_statement" => {
            let body = field(statement, "body");
            if !below(body) || line_of(statement.start_position().row) != line {
                return None;
            }
            if decide(field(statement, "condition")?)? {
                return entry_of(body);
            }
            past_loop(statement)
        }
        // `decide` is handed the loop itself: whether it takes another turn.
        "for_statement" => {
            let body = field(statement, "body");
            if !below(body) || line_of(statement.start_position().row) != line {
                return None;
            }
            if decide(statement)? {
                return entry_of(body);
            }
            past_loop(statement)
        }
        _ => None,
    }
}

/// The statements whose lines hold `line`, outermost first.
pub(super) fn statements_at(root: Node<'_>, line: u32) -> Vec<Node<'_>> {
    let mut chain = Vec::new();
    let mut node = root;
    'descend: loop {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if span(child).contains(&line) {
                if is_statement(child) {
                    chain.push(child);
                }
                node = child;
                continue 'descend;
            }
        }
        return chain;
    }
}

/// Whether a path through `statement` may skip some of what it binds: a branch, a loop,
/// a `try`, a `with` (its manager may swallow an exception) or a `match`.
pub(super) fn branches(statement: Node<'_>) -> bool {
    matches!(
        statement.kind(),
        "if_statement" | "for_statement" | "while_statement" | "try_statement" | "with_statement" | "match_statement"
    )
}

pub(super) fn is_compound(statement: Node<'_>) -> bool {
    matches!(
        statement.kind(),
        "if_statement"
            | "for_statement"
            | "while_statement"
            | "with_statement"
            | "try_statement"
            | "match_statement"
            | "function_definition"
            | "class_definition"
            | "decorated_definition"
    )
}

/// The header lines of a compound statement (a decorated definition's run to its `def`).
fn header_of(statement: Node<'_>) -> BTreeSet<u32> {
    let owner = match statement.kind() {
        "decorated_definition" => field(statement, "definition").unwrap_or(statement),
        _ => statement,
    };
    header(statement, field(owner, "body").or_else(|| field(owner, "consequence")))
}

/// The name of the frame that runs `statement`: its nearest function or class, or the module.
fn frame_name(statement: Node<'_>, source: &[u8]) -> String {
    let mut node = statement;
    while let Some(parent) = node.parent() {
        if matches!(parent.kind(), "function_definition" | "class_definition") && node.kind() == "block" {
            return field(parent, "name")
                .and_then(|n| n.utf8_text(source).ok())
                .unwrap_or_default()
                .to_owned();
        }
        if parent.kind() == "lambda" {
            return "<lambda>".to_owned();
        }
        node = parent;
    }
    super::MODULE.to_owned()
}

/// The lines the next line event of the frame `function` can be at, after a line event
/// at `line` in it.
pub(super) fn after_line(root: Node<'_>, source: &[u8], function: &str, line: u32) -> Lines {
    let chain = statements_at(root, line);
    let deepest = *chain.last()?;
    if frame_name(deepest, source) != function {
        return None;
    }
    let mut lines = Some(BTreeSet::new());
    for statement in chain {
        let deepest = statement.id() == deepest.id();
        let part = if !is_compound(statement) {
            after_simple(statement)
        } else if header_of(statement).contains(&line) || (deepest && statement.kind() == "if_statement") {
            after_header(statement, line)
        } else if deepest {
            // An `except` line leads into its handler, or on to the next one or the
            // `finally`; an `else:` or a `finally:` line is not bounded.
            return after_handler(statement, line);
        } else {
            continue;
        };
        lines = union(lines, part);
    }
    lines
}

/// Where the line event of the `except` clause of `try_statement` on `line` leads: the
/// first line of its handler (it matched), a later `except` clause's line (it did not),
/// or the `finally` clause (it did not, and nothing else matched). `None` for any other
/// line, or a handler that is not a block on lines of its own.
fn after_handler(try_statement: Node<'_>, line: u32) -> Lines {
    if try_statement.kind() != "try_statement" {
        return None;
    }
    let mut cursor = try_statement.walk();
    let clauses: Vec<Node<'_>> = try_statement.named_children(&mut cursor).collect();
    let at = clauses
        .iter()
        .position(|c| c.kind() == "except_clause" && line_of(c.start_position().row) == line)?;
    let mut lines = BTreeSet::new();
    let body = clauses[at]
        .named_children(&mut clauses[at].walk())
        .find(|c| c.kind() == "block")?;
    let first = line_of(body.start_position().row);
    if first == line {
        return None;
    }
    lines.insert(first);
    for later in &clauses[at + 1..] {
        match later.kind() {
            "except_clause" => {
                lines.insert(line_of(later.start_position().row));
            }
            "finally_clause" => lines.extend(span(*later)),
            _ => {}
        }
    }
    Some(lines)
}

/// The lines the first line event of a call of the function (or class body) starting at
/// `line` and named `function` can be at.
pub(super) fn after_call(root: Node<'_>, source: &[u8], function: &str, line: u32) -> Lines {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if matches!(node.kind(), "function_definition" | "class_definition")
            && field(node, "name").and_then(|n| n.utf8_text(source).ok()) == Some(function)
        {
            let outer = node
                .parent()
                .filter(|p| p.kind() == "decorated_definition")
                .unwrap_or(node);
            if line_of(outer.start_position().row) == line || line_of(node.start_position().row) == line {
                // A class body first runs its first line (its first decorator's, or the
                // `class` line), binding `__module__`.
                if node.kind() == "class_definition" {
                    return Some(BTreeSet::from([line_of(outer.start_position().row)]));
                }
                return entry_of(field(node, "body"));
            }
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    None
}

/// The lines of what runs between a line event at `line` and its frame's next event: the
/// statement there, or the header of the compound statement it starts.
pub(super) fn ran_lines(root: Node<'_>, line: u32) -> Lines {
    let mut deepest = *statements_at(root, line).last()?;
    if !is_compound(deepest) {
        return Some(span(deepest));
    }
    // A decorated definition runs its decorators' lines again after its `def` line.
    if let Some(decorated) = deepest.parent().filter(|p| p.kind() == "decorated_definition") {
        deepest = decorated;
    }
    let header = header_of(deepest);
    header.contains(&line).then_some(header)
}

/// The lines of the top-level function `name`'s own `return VALUE` statements (not a
/// nested function's): where it can return anything but `None`.
pub(super) fn value_return_lines(root: Node<'_>, source: &[u8], name: &str) -> BTreeSet<u32> {
    let mut cursor = root.walk();
    let function = root.named_children(&mut cursor).find(|n| {
        n.kind() == "function_definition" && field(*n, "name").is_some_and(|f| f.utf8_text(source) == Ok(name))
    });
    let mut lines = BTreeSet::new();
    let mut stack: Vec<Node<'_>> = function.and_then(|f| field(f, "body")).into_iter().collect();
    while let Some(node) = stack.pop() {
        match node.kind() {
            "function_definition" | "lambda" | "class_definition" => {}
            "return_statement" if node.named_child_count() > 0 => lines.extend(span(node)),
            _ => {
                let mut cursor = node.walk();
                stack.extend(node.named_children(&mut cursor));
            }
        }
    }
    lines
}

/// The lines where the function `definition` (its `def` node) can return without
/// raising: its own `return` statements (not a nested function's), and its body's last
/// statement when that is simple (falling off the end returns there). `None` where the
/// text cannot tell: a generator or coroutine (a `yield` or `await` returns too), a
/// `try … finally` or `with` (whose exit runs between the `return` and the return), or a
/// body that ends in a compound statement.
pub(super) fn normal_return_lines(function: Node<'_>, source: &[u8]) -> Option<BTreeSet<u32>> {
    if function.utf8_text(source).is_ok_and(|t| t.starts_with("async")) {
        return None;
    }
    let body = field(function, "body")?;
    let last = *statements(body).last()?;
    let mut lines = match last.kind() {
        "return_statement" | "raise_statement" => BTreeSet::new(),
        _ if is_compound(last) => return None,
        _ => span(last),
    };
    let mut stack = vec![body];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "function_definition" | "lambda" | "class_definition" => {}
            "yield" | "await" | "with_statement" | "finally_clause" => return None,
            "return_statement" => lines.extend(span(node)),
            _ => {
                let mut cursor = node.walk();
                stack.extend(node.named_children(&mut cursor));
            }
        }
    }
    Some(lines)
}

/// Whether a top-level statement cannot raise: `pass`, or names bound to a literal
/// (numbers, strings without interpolation, `True`/`False`/`None`, and lists, tuples,
/// sets and dicts of those), one flat tuple of names to as many such literals (`a, b =
/// [], 0`), or a `def` with no decorator or annotation whose defaults are such literals.
/// Anything else may raise (a name read, a call, an import, another unpacking, a
/// decorator, a class body).
pub(super) fn cannot_raise(statement: Node<'_>) -> bool {
    const LITERALS: [&str; 16] = [
        "integer",
        "float",
        "string",
        "string_start",
        "string_content",
        "string_end",
        "concatenated_string",
        "true",
        "false",
        "none",
        "list",
        "tuple",
        "set",
        "dictionary",
        "pair",
        "parenthesized_expression",
    ];
    fn literal(node: Node<'_>) -> bool {
        let negative_number = node.kind() == "unary_operator"
            && node
                .child_by_field_name("argument")
                .is_some_and(|a| matches!(a.kind(), "integer" | "float"));
        let mut cursor = node.walk();
        let parts: Vec<Node<'_>> = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() != "comment")
            .collect();
        negative_number || (LITERALS.contains(&node.kind()) && parts.into_iter().all(literal))
    }
    // `a = b = 1` binds both; `x: int = 1` evaluates its annotation.
    fn binds_literal(node: Node<'_>) -> bool {
        node.kind() == "assignment"
            && node.child_by_field_name("type").is_none()
            && node.child_by_field_name("left").is_some_and(|l| {
                let right = node.child_by_field_name("right");
                (l.kind() == "identifier" && right.is_some_and(|r| literal(r) || binds_literal(r)))
                    || right.is_some_and(|r| unpacks_literals(l, r))
            })
    }
    // `a, b = [], 0`: as many literals as plain names, an unpacking that cannot fail.
    fn unpacks_literals(left: Node<'_>, right: Node<'_>) -> bool {
        let (names, values) = (named(left), named(right));
        matches!(left.kind(), "pattern_list" | "tuple_pattern" | "list_pattern")
            && matches!(right.kind(), "expression_list" | "tuple" | "list")
            && names.len() == values.len()
            && names.iter().all(|n| n.kind() == "identifier")
            && values.into_iter().all(literal)
    }
    // A `def` without decorators or annotations, whose defaults are literals.
    fn plain_def(node: Node<'_>) -> bool {
        let mut cursor = node.walk();
        let parameters: Vec<Node<'_>> = node
            .child_by_field_name("parameters")
            .map(|p| p.named_children(&mut cursor).collect())
            .unwrap_or_default();
        node.child_by_field_name("return_type").is_none()
            && parameters.into_iter().all(|p| match p.kind() {
                "identifier"
                | "list_splat_pattern"
                | "dictionary_splat_pattern"
                | "keyword_separator"
                | "positional_separator" => true,
                "default_parameter" => p.child_by_field_name("value").is_some_and(literal),
                _ => false,
            })
    }
    match statement.kind() {
        "pass_statement" => true,
        "function_definition" => plain_def(statement),
        "expression_statement" => {
            let mut cursor = statement.walk();
            let parts: Vec<Node<'_>> = statement.named_children(&mut cursor).collect();
            parts.len() == 1 && binds_literal(parts[0])
        }
        _ => false,
    }
}

/// Whether a `for`'s targets are names only (no store into an object).
pub(super) fn plain_targets(node: Node<'_>) -> bool {
    match node.kind() {
        "identifier" => true,
        "pattern_list" | "tuple_pattern" | "list_pattern" => named(node).into_iter().all(plain_targets),
        _ => false,
    }
}
