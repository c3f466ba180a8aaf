//! The gallery of curated programs. The files live in `static/examples/` (readable and
//! runnable on their own); they are compiled in so that loading one needs no request.

/// One example program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Example {
    /// Stable name (the file name without `.py`).
    pub id: &'static str,
    pub title: &'static str,
    /// What to look at, in one line.
    pub summary: &'static str,
    pub code: &'static str,
    pub stdin: &'static str,
}

macro_rules! example {
    ($id:literal, $title:literal, $summary:literal) => {
        example!($id, $title, $summary, "")
    };
    ($id:literal, $title:literal, $summary:literal, $stdin:literal) => {
        Example {
            id: $id,
            title: $title,
            summary: $summary,
            code: include_str!(concat!("../../../static/examples/", $id, ".py")),
            stdin: $stdin,
        }
    };
}

pub const EXAMPLES: [Example; 14] = [
    example!(
        "recursion",
        "Recursion",
        "factorial calls itself; watch the call stack grow and shrink"
    ),
    example!(
        "fibonacci_tree",
        "Fibonacci call tree",
        "naive fib repeats work, visible in the call tree"
    ),
    example!(
        "bubble_sort",
        "Bubble sort",
        "swap neighbours; a breakpoint on the swap shows each change"
    ),
    example!(
        "merge_sort",
        "Merge sort",
        "divide and conquer: halves sorted, then merged"
    ),
    example!(
        "binary_search",
        "Binary search",
        "the search range halves on every look"
    ),
    example!(
        "closures",
        "Closures",
        "inner functions remember their enclosing variables"
    ),
    example!(
        "classes",
        "Classes and objects",
        "attributes, methods and a class attribute"
    ),
    example!(
        "generators",
        "Generators",
        "yield pauses a function and resumes it later"
    ),
    example!(
        "exceptions",
        "Exceptions",
        "an error travels up the stack to its except"
    ),
    example!(
        "list_aliasing",
        "Aliasing of lists",
        "two names, one list: the same object tag"
    ),
    example!(
        "default_argument",
        "Mutable default argument",
        "the classic shared-default bug"
    ),
    example!(
        "gradient_descent",
        "Gradient descent (silent bug)",
        "the loss grows instead of shrinking, without any error"
    ),
    example!(
        "linked_list",
        "Linked list",
        "objects that refer to objects, reversed in place"
    ),
    example!(
        "stdin_input",
        "Reading input",
        "input() reads the standard input box",
        "Ada\n3\n"
    ),
];

/// The example with this id.
pub fn find(id: &str) -> Option<&'static Example> {
    EXAMPLES.iter().find(|e| e.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    // That every example parses cleanly is tested with the parser (`syntax`'s tests).
    #[test]
    fn every_example_is_commented_and_found_by_its_id() {
        for example in EXAMPLES {
            assert!(example.code.starts_with("# "), "{} starts with a comment", example.id);
            assert_eq!(find(example.id), Some(&example));
        }
        assert!(EXAMPLES.len() >= 12);
    }
}
