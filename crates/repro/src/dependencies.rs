//! Dependency resolution from the syntax tree (RepGen §3.1): a chunk's code together with
//! the imports it uses and the project's functions, classes and constants it calls
//! (transitively, bounded), grouped by module; and the packages a script imports.

use std::collections::{BTreeMap, HashSet};

use tree_sitter::Node;

use super::project::Project;
use crate::context::chunk::{definition_of, line_text, lines_of};
use replayground_exec::python::{module_name, parse};

/// How deep calls are followed from the chunk into the project's helpers.
const MAX_DEPENDENCY_DEPTH: usize = 3;

/// Most helper definitions added to one chunk, so a context stays readable.
const MAX_DEPENDENCIES: usize = 20;

/// The top-level packages a script imports (`torch` for `from torch.nn import Linear`),
/// relative imports left out; empty when the code does not parse.
pub fn imported_packages(code: &str) -> HashSet<String> {
    let mut packages = HashSet::new();
    if let Some(tree) = parse(code) {
        walk_imports(tree.root_node(), code.as_bytes(), &mut |import| {
            if !import.module.starts_with('.') {
                packages.extend(import.module.split('.').next().map(str::to_owned));
            }
        });
    }
    packages
}

/// One name an import statement binds.
#[derive(Debug, Clone)]
pub(crate) struct Import {
    /// The name the code uses (`np`, `helper`, `pkg` for `import pkg.utils`).
    bound: String,
    /// The module as written (`numpy`, `.utils`, `pkg.utils`).
    pub(crate) module: String,
    /// The imported member for `from module import member`.
    member: Option<String>,
    /// 1-based line of the statement and its text.
    line: u32,
    statement: String,
}

/// Calls `each` for every name bound by the import statements anywhere under `node`.
pub(crate) fn walk_imports(node: Node<'_>, source: &[u8], each: &mut dyn FnMut(Import)) {
    let text = |n: Node<'_>| n.utf8_text(source).unwrap_or("").to_owned();
    match node.kind() {
        "import_statement" => {
            let mut cursor = node.walk();
            for name in node.children_by_field_name("name", &mut cursor) {
                let (module, bound) = if name.kind() == "aliased_import" {
                    let module = name.child_by_field_name("name").map(text).unwrap_or_default();
                    (module, name.child_by_field_name("alias").map(text).unwrap_or_default())
                } else {
                    let module = text(name);
                    let bound = module.split('.').next().unwrap_or("").to_owned();
                    (module, bound)
                };
                each(Import {
                    bound,
                    module,
                    member: None,
                    line: lines_of(node).0,
                    statement: text(node),
                });
            }
        }
        "import_from_statement" => {
            let module = node.child_by_field_name("module_name").map(text).unwrap_or_default();
            let mut cursor = node.walk();
            for name in node.children_by_field_name("name", &mut cursor) {
                let (member, bound) = if name.kind() == "aliased_import" {
                    (
                        name.child_by_field_name("name").map(text).unwrap_or_default(),
                        name.child_by_field_name("alias").map(text).unwrap_or_default(),
                    )
                } else {
                    (text(name), text(name))
                };
                each(Import {
                    bound,
                    module: module.clone(),
                    member: Some(member),
                    line: lines_of(node).0,
                    statement: text(node),
                });
            }
        }
        _ => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                walk_imports(child, source, each);
            }
        }
    }
}

/// A class, function or method of the project.
#[derive(Debug, Clone)]
struct Definition {
    /// Qualified inside its module: `helper`, `Trainer`, `Trainer.fit`.
    name: String,
    start_line: u32,
    end_line: u32,
    is_class: bool,
    /// The `class ...:` line for a class, shown above its members.
    header: String,
}

#[derive(Debug)]
struct ModuleInfo {
    path: String,
    module: String,
    source: String,
    definitions: Vec<Definition>,
    imports: Vec<Import>,
    /// Parsed once: each retrieval walks it again for the names a chunk uses.
    tree: Option<tree_sitter::Tree>,
}

impl ModuleInfo {
    fn new(path: &str, source: &str) -> Self {
        let mut info = Self {
            path: path.to_owned(),
            module: module_name(path),
            source: source.to_owned(),
            definitions: Vec::new(),
            imports: Vec::new(),
            tree: parse(source),
        };
        if let Some(tree) = &info.tree {
            let root = tree.root_node();
            collect_definitions(root, source, "", &mut info.definitions);
            walk_imports(root, source.as_bytes(), &mut |import| info.imports.push(import));
        }
        info
    }

    fn definition(&self, name: &str) -> Option<usize> {
        self.definitions.iter().position(|definition| definition.name == name)
    }

    /// The package a relative import starts from (`pkg.sub` for `pkg/sub/mod.py`).
    fn package(&self) -> Vec<&str> {
        let mut parts: Vec<&str> = self.module.split('.').collect();
        if !self.path.ends_with("__init__.py") {
            parts.pop();
        }
        parts
    }
}

fn collect_definitions(node: Node<'_>, source: &str, prefix: &str, into: &mut Vec<Definition>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let definition = definition_of(child);
        match definition.kind() {
            "function_definition" | "class_definition" => {
                let Some(name) = definition
                    .child_by_field_name("name")
                    .and_then(|n| n.utf8_text(source.as_bytes()).ok())
                else {
                    continue;
                };
                let qualified = if prefix.is_empty() {
                    name.to_owned()
                } else {
                    format!("{prefix}.{name}")
                };
                let (start_line, end_line) = lines_of(child);
                let is_class = definition.kind() == "class_definition";
                let header = if is_class {
                    let body_start = definition
                        .child_by_field_name("body")
                        .map_or(definition.end_byte(), |b| b.start_byte());
                    source[definition.start_byte()..body_start].trim_end().to_owned()
                } else {
                    String::new()
                };
                into.push(Definition {
                    name: qualified.clone(),
                    start_line,
                    end_line,
                    is_class,
                    header,
                });
                if is_class && let Some(body) = definition.child_by_field_name("body") {
                    collect_definitions(body, source, &qualified, into);
                }
            }
            "ERROR" => collect_definitions(child, source, prefix, into),
            // Module-level constants (`CONFIG = {...}`) are definitions too: code that uses them
            // fails with NameError without them.
            "expression_statement" if prefix.is_empty() => {
                let Some(assignment) = child.named_child(0).filter(|n| n.kind() == "assignment") else {
                    continue;
                };
                let Some(name) = assignment
                    .child_by_field_name("left")
                    .filter(|n| n.kind() == "identifier")
                    .and_then(|n| n.utf8_text(source.as_bytes()).ok())
                else {
                    continue;
                };
                let (start_line, end_line) = lines_of(child);
                into.push(Definition {
                    name: name.to_owned(),
                    start_line,
                    end_line,
                    is_class: false,
                    header: String::new(),
                });
            }
            _ => {}
        }
    }
}

/// The names a piece of code uses: bare identifiers and `object.attribute` pairs.
#[derive(Default)]
struct Uses {
    names: HashSet<String>,
    attributes: HashSet<(String, String)>,
}

fn collect_uses(node: Node<'_>, source: &[u8], range: (usize, usize), uses: &mut Uses) {
    if node.end_byte() <= range.0 || node.start_byte() >= range.1 {
        return;
    }
    match node.kind() {
        "import_statement" | "import_from_statement" | "comment" | "string" => return,
        "identifier" => {
            if let Ok(name) = node.utf8_text(source) {
                uses.names.insert(name.to_owned());
            }
        }
        "attribute" => {
            if let (Some(object), Some(attribute)) = (
                node.child_by_field_name("object"),
                node.child_by_field_name("attribute"),
            ) && object.kind() == "identifier"
                && let (Ok(object), Ok(attribute)) = (object.utf8_text(source), attribute.utf8_text(source))
            {
                uses.attributes.insert((object.to_owned(), attribute.to_owned()));
            }
        }
        _ => {}
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        collect_uses(child, source, range, uses);
    }
}

/// The project's modules, definitions and imports, for resolving a chunk's dependencies.
#[derive(Debug)]
pub struct ProjectIndex {
    modules: Vec<ModuleInfo>,
}

/// A piece of a module to print: lines `start..=end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Piece {
    start: u32,
    end: u32,
}

impl ProjectIndex {
    /// Parses every Python file of the project once.
    pub fn new(project: &Project) -> Self {
        Self {
            modules: project
                .python_files()
                .map(|file| ModuleInfo::new(&file.path, &file.text))
                .collect(),
        }
    }

    fn module_by_path(&self, path: &str) -> Option<usize> {
        self.modules.iter().position(|module| module.path == path)
    }

    /// Resolves a module name as written in `from` (relative or absolute) to a project module.
    fn resolve_module(&self, from: usize, written: &str) -> Option<usize> {
        let dots = written.len() - written.trim_start_matches('.').len();
        let rest = &written[dots..];
        let wanted = if dots > 0 {
            let mut base = self.modules[from].package();
            for _ in 1..dots {
                base.pop();
            }
            if !rest.is_empty() {
                base.push(rest);
            }
            base.join(".")
        } else {
            rest.to_owned()
        };
        if wanted.is_empty() {
            return None;
        }
        self.modules
            .iter()
            .position(|module| module.module == wanted)
            .or_else(|| {
                // The upload may be rooted above or below the import root: match on the tail.
                let suffix = format!(".{wanted}");
                self.modules
                    .iter()
                    .enumerate()
                    .filter(|(_, module)| {
                        module.module.ends_with(&suffix) || wanted.ends_with(&format!(".{}", module.module))
                    })
                    .min_by_key(|(_, module)| module.module.len())
                    .map(|(index, _)| index)
            })
    }

    /// The code of `spans` (1-based inclusive line ranges) of the file at `path`, with the
    /// imports it uses and the project definitions it calls, grouped by module.
    pub fn context(&self, path: &str, spans: &[(u32, u32)]) -> String {
        let Some(home) = self.module_by_path(path) else {
            return String::new();
        };
        // Per module: the imports to print (by line) and the pieces of code.
        let mut imports: BTreeMap<usize, BTreeMap<u32, String>> = BTreeMap::new();
        let mut pieces: BTreeMap<usize, Vec<Piece>> = BTreeMap::new();
        let mut order = vec![home];
        let home_pieces: Vec<Piece> = spans.iter().map(|&(start, end)| Piece { start, end }).collect();
        pieces.insert(home, home_pieces.clone());

        let mut queue: Vec<(usize, Vec<Piece>, usize)> = vec![(home, home_pieces, 0)];
        let mut added: HashSet<(usize, usize)> = HashSet::new();
        while let Some((module_index, code, depth)) = queue.pop() {
            let module = &self.modules[module_index];
            let uses = uses_of(module, &code);
            let enclosing_class = code.first().and_then(|piece| class_around(module, piece.start));
            let mut found: Vec<(usize, usize)> = Vec::new();
            for name in &uses.names {
                if let Some(definition) = module.definition(name) {
                    found.push((module_index, definition));
                }
                for import in module.imports.iter().filter(|import| &import.bound == name) {
                    imports
                        .entry(module_index)
                        .or_default()
                        .insert(import.line, import.statement.clone());
                    let Some(target) = self.resolve_module(module_index, &import.module) else {
                        continue;
                    };
                    if let Some(member) = &import.member
                        && let Some(definition) = self.modules[target].definition(member)
                    {
                        found.push((target, definition));
                    }
                }
            }
            // A method's chunk shows how its object is built: what `self` holds and
            // what constructing the class takes.
            if depth == 0
                && let Some(class) = &enclosing_class
                && let Some(init) = module.definition(&format!("{class}.__init__"))
            {
                found.push((module_index, init));
            }
            for (object, attribute) in &uses.attributes {
                if object == "self"
                    && let Some(class) = &enclosing_class
                    && let Some(definition) = module.definition(&format!("{class}.{attribute}"))
                {
                    found.push((module_index, definition));
                    continue;
                }
                for import in module.imports.iter().filter(|import| &import.bound == object) {
                    // `import pkg.utils as u` / `from pkg import utils` then `u.helper(...)`.
                    let written = match &import.member {
                        Some(member) => format!("{}.{member}", import.module),
                        None => import.module.clone(),
                    };
                    if let Some(target) = self.resolve_module(module_index, &written)
                        && let Some(definition) = self.modules[target].definition(attribute)
                    {
                        found.push((target, definition));
                    }
                }
            }
            found.sort_unstable();
            for (target, definition_index) in found {
                if added.len() >= MAX_DEPENDENCIES || !added.insert((target, definition_index)) {
                    continue;
                }
                let definition = &self.modules[target].definitions[definition_index];
                let piece = Piece {
                    start: definition.start_line,
                    end: definition.end_line,
                };
                let list = pieces.entry(target).or_default();
                // Already shown (inside the chunk or a helper), or it would repeat what is shown.
                if list.iter().any(|p| p.start <= piece.end && piece.start <= p.end) {
                    continue;
                }
                list.push(piece);
                if !order.contains(&target) {
                    order.push(target);
                }
                if depth < MAX_DEPENDENCY_DEPTH {
                    queue.push((target, vec![piece], depth + 1));
                }
            }
        }

        let mut out = String::new();
        for module_index in order {
            let module = &self.modules[module_index];
            let mut module_pieces = pieces.remove(&module_index).unwrap_or_default();
            module_pieces.sort_unstable();
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str("# --- ");
            out.push_str(&module.path);
            out.push_str(" ---\n");
            let shown_imports: Vec<&String> = imports
                .get(&module_index)
                .into_iter()
                .flat_map(|by_line| by_line.iter())
                .filter(|(line, _)| !module_pieces.iter().any(|p| p.start <= **line && **line <= p.end))
                .map(|(_, statement)| statement)
                .collect();
            let mut seen_statements = HashSet::new();
            for statement in shown_imports {
                if seen_statements.insert(statement) {
                    out.push_str(statement);
                    out.push('\n');
                }
            }
            let mut open_classes: Vec<String> = Vec::new();
            for piece in module_pieces {
                let classes = classes_around(module, piece.start, piece.end);
                if classes != open_classes || !out.ends_with("\n\n") {
                    out.push('\n');
                }
                let common = classes.iter().zip(&open_classes).take_while(|(a, b)| a == b).count();
                for class in &classes[common..] {
                    if let Some(index) = module.definition(class) {
                        let definition = &module.definitions[index];
                        let indent = definition.start_line;
                        let header_line = line_text(&module.source, indent, indent);
                        let spaces = header_line.len() - header_line.trim_start().len();
                        out.push_str(&" ".repeat(spaces));
                        out.push_str(&definition.header);
                        out.push('\n');
                    }
                }
                open_classes = classes;
                out.push_str(&line_text(&module.source, piece.start, piece.end));
                out.push('\n');
            }
        }
        out
    }

    /// The 1-based lines of a definition (`helper`, `Trainer.fit`) of the file at `path`.
    pub fn definition_lines(&self, path: &str, name: &str) -> Option<(u32, u32)> {
        let module = &self.modules[self.module_by_path(path)?];
        let definition = &module.definitions[module.definition(name)?];
        Some((definition.start_line, definition.end_line))
    }
}

fn uses_of(module: &ModuleInfo, code: &[Piece]) -> Uses {
    let mut uses = Uses::default();
    let Some(tree) = &module.tree else { return uses };
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(module.source.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let byte_of_line = |line: u32| {
        line_starts
            .get(line.saturating_sub(1) as usize)
            .copied()
            .unwrap_or(module.source.len())
    };
    for piece in code {
        let range = (byte_of_line(piece.start), byte_of_line(piece.end + 1));
        collect_uses(tree.root_node(), module.source.as_bytes(), range, &mut uses);
    }
    uses
}

/// The qualified name of the innermost class whose body holds `line` (for `self.x`).
fn class_around(module: &ModuleInfo, line: u32) -> Option<String> {
    classes_around(module, line, line).pop()
}

/// Qualified names of the classes strictly around lines `start..=end`, outermost first.
fn classes_around(module: &ModuleInfo, start: u32, end: u32) -> Vec<String> {
    let mut classes: Vec<&Definition> = module
        .definitions
        .iter()
        .filter(|d| d.is_class && d.start_line < start && end <= d.end_line)
        .collect();
    classes.sort_by_key(|d| d.start_line);
    classes.into_iter().map(|d| d.name.clone()).collect()
}

/// A chunk's code (lines `start_line..=end_line` of `path`) plus the imports it uses and
/// the project functions and classes it calls, grouped by module.
pub fn with_dependencies(project: &Project, path: &str, start_line: u32, end_line: u32) -> String {
    ProjectIndex::new(project).context(path, &[(start_line, end_line)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::SourceFile;

    #[test]
    fn module_level_constants_are_dependencies() {
        let project = Project {
            files: vec![
                SourceFile {
                    path: "config.py".into(),
                    text: "import os\n\nCONFIG = {\n    \"lr\": 0.1,\n}\nUNUSED = 3\n".into(),
                },
                SourceFile {
                    path: "train.py".into(),
                    text: "from config import CONFIG\n\n\ndef train():\n    return CONFIG[\"lr\"]\n".into(),
                },
            ],
            ..Project::default()
        };
        let code = with_dependencies(&project, "train.py", 4, 5);
        assert!(code.contains("CONFIG = {\n    \"lr\": 0.1,\n}"), "{code}");
        assert!(!code.contains("UNUSED"), "{code}");
    }

    #[test]
    fn a_methods_context_shows_its_class_constructor() {
        let text = "class Trainer:\n    def __init__(self, model, epochs=3):\n        self.model = model\n        self.epochs = epochs\n\n    def log(self):\n        pass\n\n    def fit(self, data):\n        for _ in range(self.epochs):\n            self.model.step(data)\n";
        let project = Project {
            files: vec![SourceFile {
                path: "trainer.py".into(),
                text: text.into(),
            }],
            ..Project::default()
        };
        let code = with_dependencies(&project, "trainer.py", 9, 11);
        assert!(code.contains("class Trainer:"), "{code}");
        assert!(
            code.contains("def __init__(self, model, epochs=3):\n        self.model = model"),
            "{code}"
        );
        assert!(!code.contains("def log"), "{code}");
    }
}
