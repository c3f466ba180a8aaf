//! What a report says about one name's data, read from the words after the name up to the
//! end of its sentence or the next data name: its shape (`X_train is a float32 tensor of
//! shape (800, 10)`), the range of its values (`values between about -10 and 220`),
//! whether it is a numpy array, and whether it is `float32`.

use std::sync::LazyLock;

use regex::Regex;

use super::code::{parse_dims, re};

/// Names that usually hold features.
pub(crate) const FEATURE_NAMES: [&str; 15] = [
    "x", "data", "inputs", "input", "features", "images", "x_train", "x_test", "x_val", "train_x", "test_x", "batch",
    "logits", "weights", "w",
];

/// Names that usually hold labels.
pub(crate) const LABEL_NAMES: [&str; 11] = [
    "y", "labels", "label", "targets", "target", "y_train", "y_test", "y_val", "train_y", "test_y", "y_true",
];

/// What the report states about one name's data; empty when it names it nowhere.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Stated {
    pub shape: Option<Vec<usize>>,
    pub range: Option<(f64, f64)>,
    /// The report calls it an array (`numpy array`, `ndarray`), not a tensor.
    pub array: bool,
    /// The report says its values are `float32`.
    pub float32: bool,
}

/// Reads what `report` says about `name`'s data.
pub(crate) fn stated(report: &str, name: &str) -> Stated {
    static SHAPE: LazyLock<Regex> = LazyLock::new(|| re(r"\((\d+(?:\s*,\s*\d+)+)\s*,?\)|\((\d+)\s*,\s*\)"));
    static RANGE: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)\b(?:between|from)\s+(?:about\s+|roughly\s+|around\s+|approximately\s+)?(-?\d+(?:\.\d+)?)\s+(?:and|to)\s+(-?\d+(?:\.\d+)?)",
        )
    });
    static ARRAY: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\b(?:numpy|ndarray|np\.array)\b"));
    let Some(window) = window(report, name, true) else {
        return Stated::default();
    };
    let shape = SHAPE
        .captures(window)
        .and_then(|c| parse_dims(c.get(1).or(c.get(2))?.as_str(), 10_000_000));
    let range = RANGE.captures(window).and_then(|c| {
        let (low, high) = (c[1].parse::<f64>().ok()?, c[2].parse::<f64>().ok()?);
        (low < high).then_some((low, high))
    });
    Stated {
        shape,
        range,
        array: ARRAY.is_match(window),
        float32: window.contains("float32"),
    }
}

/// The sample shapes the report states for a dataset `name` (`SegDataset … loads the tiles
/// as 3x100x100 float tensors and the masks as 100x100 long tensors with 0/1`): the
/// inputs', then the targets' with whether they are class indices.
pub(crate) fn stated_samples(report: &str, name: &str) -> Option<(Vec<usize>, Vec<usize>, bool)> {
    static SHAPE: LazyLock<Regex> =
        LazyLock::new(|| re(r"\b(\d+(?:\s*[x×]\s*\d+)+)\b|\((\d+(?:\s*,\s*\d+)+)\s*,?\)|\((\d+)\s*,\s*\)"));
    static INDICES: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)^\W*(?:\w+\W+){0,3}?(?:long|int\w*|0/1|labels?|class(?:es)?|indices)\b"));
    let sentence = window(report, name, false)?;
    let mut shapes = SHAPE.captures_iter(sentence).filter_map(|c| {
        let whole = c.get(0)?;
        let dims = parse_dims(c.get(1).or(c.get(2)).or(c.get(3))?.as_str(), 1_000_000)?;
        Some((dims, whole.end()))
    });
    let (inputs, _) = shapes.next()?;
    let (targets, end) = shapes.next()?;
    Some((inputs, targets, INDICES.is_match(&sentence[end..])))
}

/// The words about `name`: from its first mention as a word to the end of that sentence or
/// a line break, and, with `data_names`, before the mention of another data name.
fn window<'a>(report: &'a str, name: &str, data_names: bool) -> Option<&'a str> {
    static SENTENCE_END: LazyLock<Regex> = LazyLock::new(|| re(r"\.(?:\s|$)|\n"));
    static DATA_NAME: LazyLock<Regex> = LazyLock::new(|| {
        let names: Vec<String> = FEATURE_NAMES
            .iter()
            .chain(&LABEL_NAMES)
            .map(|n| regex::escape(n))
            .collect();
        re(&format!(r"(?i)\b(?:{})\b", names.join("|")))
    });
    let mention = Regex::new(&format!(r"\b{}\b", regex::escape(name)))
        .ok()?
        .find(report)?;
    let rest = &report[mention.end()..];
    let end = [
        SENTENCE_END.find(rest).map(|m| m.start()),
        DATA_NAME
            .find_iter(rest)
            .find(|m| data_names && !m.as_str().eq_ignore_ascii_case(name))
            .map(|m| m.start()),
    ]
    .into_iter()
    .flatten()
    .min()
    .unwrap_or(rest.len());
    Some(&rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_gets_what_its_own_words_say() {
        let report = "X_train is a float32 tensor of shape (800, 10) with lab measurements (values between about -10 and 220, not normalized) and y_train is (800, 1) with 0.0/1.0. The first epoch prints a loss of about 10 (1, 2).";
        assert_eq!(
            stated(report, "X_train"),
            Stated {
                shape: Some(vec![800, 10]),
                range: Some((-10.0, 220.0)),
                array: false,
                float32: true,
            }
        );
        assert_eq!(stated(report, "y_train").shape, Some(vec![800, 1]));
        assert_eq!(stated(report, "y_train").range, None, "the range is X_train's");
        assert_eq!(stated(report, "x_val"), Stated::default(), "not named");
        let array = stated("My features are a numpy array of shape (64,) from 0 to 1.", "features");
        assert_eq!(array.shape, Some(vec![64]));
        assert_eq!(array.range, Some((0.0, 1.0)));
        assert!(array.array);
        // Only the sentence that names it: a later shape is another thing's.
        assert_eq!(stated("x is my input. The output has shape (3, 4).", "x").shape, None);
    }

    #[test]
    fn a_datasets_samples_are_the_shapes_its_sentence_states() {
        let report = "It crashes in the first batch. SegDataset (in data.py, not shown) just loads the RGB tiles as 3x100x100 float tensors and the masks as 100x100 long tensors with 0/1, that part works. A 1x3x128x128 tensor works.";
        assert_eq!(
            stated_samples(report, "SegDataset"),
            Some((vec![3, 100, 100], vec![100, 100], true))
        );
        let regression = "MyDataset returns (8,) feature vectors and (1,) float targets.";
        assert_eq!(stated_samples(regression, "MyDataset"), Some((vec![8], vec![1], false)));
        assert_eq!(stated_samples("MyDataset returns 3x32x32 images.", "MyDataset"), None);
    }
}
