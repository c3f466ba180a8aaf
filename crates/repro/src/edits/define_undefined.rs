//! Refinement edit: each name the checks report undefined gets its usual import, the
//! project's own definition, or synthetic data of the inferred shape.

use regex::Regex;

use super::code::{add_imports, defines, defines_at_module_level, insert_after_imports, shape_literal};
use super::complete_imports::import_for;
use super::hoist_main_blocks::split_entry_point;
use crate::project::Project;

/// Names that usually hold data, defined synthetically when a report's snippet uses them undefined.
/// `code` is read for what the labels must be: class indices below `k` where the code
/// indexes a one-hot table with them (`np.eye(k)[y]`, `to_categorical(y, k)`,
/// `one_hot(y, k)`), else 0/1 (which a log-loss also needs).
pub(crate) fn synthetic_definition(name: &str, shape: &[usize], code: &str) -> Option<String> {
    let lower = name.to_lowercase();
    let rows = shape.first().copied().unwrap_or(100);
    let features = [
        "x", "data", "inputs", "input", "features", "images", "x_train", "x_test", "x_val", "train_x", "test_x",
        "batch", "logits", "weights", "w",
    ];
    let labels = [
        "y", "labels", "label", "targets", "target", "y_train", "y_test", "y_val", "train_y", "test_y", "y_true",
    ];
    if features.contains(&lower.as_str()) {
        Some(format!(
            "{name} = np.random.default_rng(0).standard_normal({})",
            shape_literal(shape)
        ))
    } else if labels.contains(&lower.as_str()) {
        let classes = class_count(code, name).unwrap_or(2);
        Some(format!(
            "{name} = np.random.default_rng(1).integers(0, {classes}, size={rows})"
        ))
    } else if [
        "files",
        "filenames",
        "file_names",
        "file_list",
        "filelist",
        "paths",
        "file_paths",
        "filepaths",
        "image_paths",
        "image_files",
        "img_paths",
        "image_list",
    ]
    .contains(&lower.as_str())
    {
        // A folder of images the report does not include: names for the image reads,
        // which `synthesize_images` turns into synthetic pixels.
        Some(format!("{name} = [f\"image_{{i}}.png\" for i in range(8)]"))
    } else if ["lr", "learning_rate"].contains(&lower.as_str()) {
        Some(format!("{name} = 0.01"))
    } else if ["epochs", "n_epochs", "num_epochs", "steps", "n_steps"].contains(&lower.as_str()) {
        Some(format!("{name} = 10"))
    } else if ["batch_size", "n", "n_samples", "num_samples"].contains(&lower.as_str()) {
        Some(format!("{name} = {rows}"))
    } else {
        None
    }
}

/// The number of classes `code` one-hot encodes `name` into, when it says.
fn class_count(code: &str, name: &str) -> Option<u64> {
    let n = regex::escape(name);
    let patterns = [
        format!(r"\beye\(\s*(\d+)\s*\)\s*\[\s*{n}\b"),
        format!(r"\b(?:to_categorical|one_hot)\(\s*{n}\s*,\s*(?:num_classes\s*=\s*)?(\d+)"),
    ];
    patterns
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .find_map(|r| r.captures(code).and_then(|c| c[1].parse().ok()))
}

/// A top-level definition of `name` in the project: a one-line assignment, or a whole
/// `def` / `class` block, with the file it came from.
fn project_definition(project: &Project, name: &str) -> Option<String> {
    let n = regex::escape(name);
    let assignment = Regex::new(&format!(r"(?m)^{n}\s*(?::[^=\n]*)?=[^=\n][^\n]*$")).ok()?;
    let block = Regex::new(&format!(r"(?m)^(?:def|class)\s+{n}\b")).ok()?;
    for file in project.python_files() {
        if let Some(m) = assignment.find(&file.text) {
            let line = m.as_str().trim_end();
            // Only a complete one-line value: an open bracket would need the lines after it.
            let opens = line.matches(['(', '[', '{']).count();
            let closes = line.matches([')', ']', '}']).count();
            if opens == closes {
                return Some(format!("{line}  # from {}", file.path));
            }
        }
        if let Some(m) = block.find(&file.text) {
            let rest = &file.text[m.start()..];
            let mut lines = rest.lines();
            let mut text = lines.next().unwrap_or("").to_owned();
            for line in lines {
                if !line.trim().is_empty() && !line.starts_with([' ', '\t']) {
                    break;
                }
                text.push('\n');
                text.push_str(line);
            }
            return Some(format!("# from {}\n{}", file.path, text.trim_end()));
        }
    }
    // Else how the project's own entry point builds it: `model = Net().fit(X, y)` in an
    // `if __name__ == "__main__":` block (its names are resolved in the next round).
    let target = Regex::new(&format!(
        r"(?m)^(?:{n}|[\w\s,]*,\s*{n}|{n}\s*,[\w\s,]*)\s*(?::[^=\n]*)?=[^=\n][^\n]*$"
    ))
    .ok()?;
    project.python_files().find_map(|file| {
        let (_, body) = split_entry_point(&file.text);
        let line = target.find(&body)?.as_str().trim_end();
        let balanced = line.matches(['(', '[', '{']).count() == line.matches([')', ']', '}']).count();
        balanced.then(|| format!("{line}  # from {} (its entry point)", file.path))
    })
}

/// Defines the `undefined` names that are still unbound at module level: imports for the
/// well-known ones, else the project's definitions, else synthetic data of `shape` (none
/// without one). Returns the edits made (definitions, then imports).
pub(crate) fn define_undefined(
    code: &mut String,
    undefined: &[String],
    project: Option<&Project>,
    shape: Option<&[usize]>,
) -> Vec<String> {
    let mut edits = Vec::new();
    let mut imports = Vec::new();
    let mut definitions = Vec::new();
    for name in undefined {
        // Reported undefined at module level: a parameter of the same name elsewhere does
        // not define it (only an edit of this round may have).
        if defines_at_module_level(code, name) {
            continue;
        }
        if let Some(line) = import_for(name) {
            imports.push(line);
        } else if let Some(definition) = project.and_then(|p| project_definition(p, name)) {
            definitions.push(definition);
        } else if let Some(definition) = shape.and_then(|shape| synthetic_definition(name, shape, code)) {
            definitions.push(definition);
        }
    }
    if !definitions.is_empty() {
        // Functions and classes first: the assignments of this round may call them.
        definitions.sort_by_key(|d| !d.starts_with("# from "));
        insert_after_imports(code, &format!("{}\n", definitions.join("\n")));
        edits.push(format!("defined undefined data: {}", definitions.join("; ")));
        if !defines(code, "np") {
            imports.push("import numpy as np");
        }
    }
    if !imports.is_empty() {
        imports.dedup();
        add_imports(code, &imports);
        edits.push(format!("added imports for undefined names: {}", imports.join("; ")));
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::SourceFile;

    #[test]
    fn synthetic_labels_follow_how_the_code_uses_them() {
        let one_hot = "Y = np.eye(10)[y]\nloss = -np.mean(np.log(p) * Y)\n";
        assert_eq!(
            synthetic_definition("y", &[64, 3], one_hot).unwrap(),
            "y = np.random.default_rng(1).integers(0, 10, size=64)"
        );
        let keras = "labels = to_categorical(y_train, num_classes=7)\n";
        assert!(
            synthetic_definition("y_train", &[8], keras)
                .unwrap()
                .contains("integers(0, 7,")
        );
        // A log-loss needs 0/1 labels; with nothing said, labels are binary.
        let log_loss = "loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))\n";
        assert!(
            synthetic_definition("y", &[8], log_loss)
                .unwrap()
                .contains("integers(0, 2,")
        );
        assert_eq!(class_count("Y = np.eye(10)[labels]", "y"), None);
    }

    #[test]
    fn an_undefined_list_of_files_gets_image_names() {
        let definition = synthetic_definition("files", &[8], "for f in files:\n    Image.open(f)\n").unwrap();
        assert_eq!(definition, "files = [f\"image_{i}.png\" for i in range(8)]");
        assert_eq!(synthetic_definition("file_handle", &[8], ""), None);
    }

    #[test]
    fn undefined_names_are_found_in_the_project() {
        let project = Project {
            files: vec![SourceFile {
                path: "featurize/helpers.py".into(),
                text:
                    "import numpy as np\nN_FEATURES = 4\nBIG = [\n  1,\n]\n\ndef scale(x):\n    return x * 2\n\nY = 1\n"
                        .into(),
            }],
            notes: vec![],
        };
        assert_eq!(
            project_definition(&project, "N_FEATURES").unwrap(),
            "N_FEATURES = 4  # from featurize/helpers.py"
        );
        assert_eq!(
            project_definition(&project, "scale").unwrap(),
            "# from featurize/helpers.py\ndef scale(x):\n    return x * 2"
        );
        assert!(project_definition(&project, "BIG").is_none());
        assert!(project_definition(&project, "missing").is_none());

        // Objects the entry point builds: taken from its `__main__` block, dedented.
        let project = Project {
            files: vec![SourceFile {
                path: "report.py".into(),
                text: "from fit import Net\n\nif __name__ == \"__main__\":\n    X, y = load(), labels()\n    model = Net().fit(X, y)\n    print(model)\n"
                    .into(),
            }],
            notes: vec![],
        };
        assert_eq!(
            project_definition(&project, "model").unwrap(),
            "model = Net().fit(X, y)  # from report.py (its entry point)"
        );
        assert_eq!(
            project_definition(&project, "y").unwrap(),
            "X, y = load(), labels()  # from report.py (its entry point)"
        );
        assert!(
            project_definition(&project, "Net").is_none(),
            "an import is not a definition"
        );
    }
}
