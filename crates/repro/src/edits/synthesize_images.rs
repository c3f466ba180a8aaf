//! Edit action: images read from files that are not here (`Image.open(f)`,
//! `cv2.imread(path)`, Keras's `load_img(path)`, `plt.imread(path)`, `imageio.imread(path)`)
//! replaced with synthetic images of the size the report states, as the reader would
//! return them. A report's image folder is never part of it; without this, every such
//! script stops at a `FileNotFoundError` before reaching the bug. Left alone when the
//! report is about reading the file itself.

use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::code::{define_helper_once, re};

const HELPER_NAME: &str = "synthetic_image";

/// The function the replaced calls use, defined once after the imports.
const HELPER: &str = r#"def synthetic_image(height, width, channels, pil=False):
    """Stands in for an image file that is not here: random pixels of the size the
    report states, as the uint8 array (or PIL image) an image reader returns."""
    shape = (height, width) if channels == 1 else (height, width, channels)
    pixels = np.random.default_rng(0).integers(0, 256, shape).astype(np.uint8)
    if pil:
        from PIL import Image as PILImage

        return PILImage.fromarray(pixels)
    return pixels
"#;

/// An image's height, width and channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ImageSize {
    height: usize,
    width: usize,
    channels: usize,
}

impl ImageSize {
    /// What a report that states no size gets: small, colour.
    const DEFAULT: Self = Self {
        height: 64,
        width: 64,
        channels: 3,
    };

    fn arguments(self) -> String {
        format!("{}, {}, {}", self.height, self.width, self.channels)
    }
}

/// The image size a report's text states: the last three numbers of a shape such as
/// `(None, 286, 384, 1)` or `[224, 224, 3]` (height, width, channels), or a channels-first
/// `torch.Size([1, 3, 224, 224])`. Sides are at least 8 pixels; channels 1, 3 or 4.
fn stated_size(text: &str) -> Option<ImageSize> {
    static SHAPE: LazyLock<Regex> =
        LazyLock::new(|| re(r"[\(\[]\s*((?:(?:None|\?|-1|\d+)\s*,\s*)*\d+(?:\s*,\s*\d+)*)\s*,?\s*[\)\]]"));
    let side = |d: usize| (8..=4096).contains(&d);
    let channel = |d: usize| matches!(d, 1 | 3 | 4);
    SHAPE.captures_iter(text).find_map(|c| {
        let dims: Vec<usize> = c[1].split(',').filter_map(|d| d.trim().parse().ok()).collect();
        match dims.as_slice() {
            [.., h, w, ch] if side(*h) && side(*w) && channel(*ch) => Some(ImageSize {
                height: *h,
                width: *w,
                channels: *ch,
            }),
            [.., ch, h, w] if channel(*ch) && side(*h) && side(*w) => Some(ImageSize {
                height: *h,
                width: *w,
                channels: *ch,
            }),
            _ => None,
        }
    })
}

/// A call's arguments, one level of nested parentheses allowed.
const ARGS: &str = r"\(([^()]*(?:\([^()]*\)[^()]*)*)\)";

/// Whether a reader's arguments ask for one grey channel.
fn grayscale(args: &str) -> bool {
    static GREY: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"(?i)(?:IMREAD_GRAYSCALE|color_mode\s*=\s*['"]grayscale['"]|as_gray\s*=\s*True|,\s*0\s*$|mode\s*=\s*['"]L['"])"#,
        )
    });
    GREY.is_match(args.trim())
}

/// `target_size=(h, w)` in Keras's `load_img`.
fn target_size(args: &str) -> Option<(usize, usize)> {
    static TARGET: LazyLock<Regex> = LazyLock::new(|| re(r"target_size\s*=\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)"));
    let c = TARGET.captures(args)?;
    Some((c[1].parse().ok()?, c[2].parse().ok()?))
}

/// Whether a reader's first argument is a file the sandbox has (an absolute system path).
fn available(args: &str) -> bool {
    let first = args.split(',').next().unwrap_or("").trim();
    let path = first.trim_start_matches(['r', 'f']).trim_matches(['"', '\'']);
    path.starts_with("/usr/")
}

/// Replaces `code`'s image-file reads with synthetic images of the size `report` states,
/// unless the report's output (`observed`) is about opening the file.
pub(crate) fn synthesize_images(code: &mut String, report: &str, observed: &str) -> Option<String> {
    static PIL_OPEN: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"\b(?:PIL\.)?Image\.open{ARGS}")));
    static CV2: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"\bcv2\.imread{ARGS}")));
    static LOAD_IMG: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"\b(?:[A-Za-z_][\w.]*\.)?load_img{ARGS}")));
    static MPL: LazyLock<Regex> = LazyLock::new(|| {
        re(&format!(
            r"\b(?:plt|mpimg|matplotlib\.pyplot|matplotlib\.image)\.imread{ARGS}"
        ))
    });
    static OTHER: LazyLock<Regex> =
        LazyLock::new(|| re(&format!(r"\b(?:imageio(?:\.v[23])?|iio|skimage\.io|io)\.imread{ARGS}")));
    const ABOUT_THE_FILE: [&str; 4] = [
        "No such file",
        "cannot identify image file",
        "FileNotFoundError",
        "UnidentifiedImageError",
    ];
    if ABOUT_THE_FILE.iter().any(|w| observed.contains(w)) {
        return None;
    }
    let size = stated_size(report).unwrap_or(ImageSize::DEFAULT);
    let mut replaced: Vec<&str> = Vec::new();
    let mut new = code.clone();
    // Every pattern captures one group: the reader's arguments.
    let mut pass = |pattern: &Regex, reader: &'static str, replace: &dyn Fn(&str) -> String| {
        let text = pattern
            .replace_all(&new, |c: &Captures<'_>| {
                if available(&c[1]) {
                    return c[0].to_owned();
                }
                replaced.push(reader);
                replace(&c[1])
            })
            .into_owned();
        new = text;
    };
    let colour = |args: &str| ImageSize {
        channels: if grayscale(args) { 1 } else { size.channels },
        ..size
    };
    pass(&PIL_OPEN, "Image.open", &|args| {
        format!("{HELPER_NAME}({}, pil=True)", colour(args).arguments())
    });
    pass(&CV2, "cv2.imread", &|args| {
        let channels = if grayscale(args) { 1 } else { 3 };
        format!("{HELPER_NAME}({})", ImageSize { channels, ..size }.arguments())
    });
    pass(&LOAD_IMG, "load_img", &|args| {
        let (height, width) = target_size(args).unwrap_or((size.height, size.width));
        let channels = if grayscale(args) { 1 } else { 3 };
        format!(
            "{HELPER_NAME}({}, pil=True)",
            ImageSize {
                height,
                width,
                channels
            }
            .arguments()
        )
    });
    pass(&MPL, "plt.imread", &|args| {
        format!("({HELPER_NAME}({}) / 255.0)", colour(args).arguments())
    });
    pass(&OTHER, "imread", &|args| {
        format!("{HELPER_NAME}({})", colour(args).arguments())
    });
    if replaced.is_empty() {
        return None;
    }
    *code = new;
    define_helper_once(code, HELPER_NAME, HELPER);
    replaced.dedup();
    Some(format!(
        "replaced the image file reads ({}) with synthetic {}x{} images of {} channel(s)",
        replaced.join(", "),
        size.height,
        size.width,
        size.channels
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_size_comes_from_the_reports_shapes() {
        let keras = "expected shape=(None, 286, 384, 1), found shape=(None, None, 286, 384, 1)";
        assert_eq!(
            stated_size(keras),
            Some(ImageSize {
                height: 286,
                width: 384,
                channels: 1
            })
        );
        assert_eq!(
            stated_size("got torch.Size([1, 3, 224, 224])"),
            Some(ImageSize {
                height: 224,
                width: 224,
                channels: 3
            })
        );
        // Shapes of features or labels are not images.
        assert_eq!(stated_size("X has shape (100, 4) and y (100,)"), None);
    }

    #[test]
    fn image_reads_become_synthetic_images_of_the_stated_size() {
        let mut code = "import numpy as np\nfrom PIL import Image\nimport cv2\n\nfor f in files:\n    img = Image.open(f)\n    a = cv2.imread(f, cv2.IMREAD_GRAYSCALE)\n    b = image.load_img(f, target_size=(32, 48))\n    c = plt.imread(os.path.join(d, f))\n".to_owned();
        let edit = synthesize_images(&mut code, "expected shape=(None, 286, 384, 1)", "ValueError: ...").unwrap();
        assert!(edit.contains("Image.open, cv2.imread, load_img, plt.imread"), "{edit}");
        assert!(code.contains("img = synthetic_image(286, 384, 1, pil=True)"), "{code}");
        assert!(code.contains("a = synthetic_image(286, 384, 1)"), "{code}");
        assert!(code.contains("b = synthetic_image(32, 48, 3, pil=True)"), "{code}");
        assert!(code.contains("c = (synthetic_image(286, 384, 1) / 255.0)"), "{code}");
        let helper = code.find("def synthetic_image").unwrap();
        assert!(code.find("import cv2").unwrap() < helper && helper < code.find("for f in files").unwrap());
        // Applied twice, the helper is defined once.
        code.push_str("d = Image.open('x.png')\n");
        synthesize_images(&mut code, "", "").unwrap();
        assert_eq!(code.matches("def synthetic_image").count(), 1, "{code}");
    }

    #[test]
    fn a_report_about_the_file_or_a_system_image_keeps_the_read() {
        let mut code = "img = Image.open('cat.png')\n".to_owned();
        assert_eq!(
            synthesize_images(
                &mut code,
                "",
                "FileNotFoundError: [Errno 2] No such file or directory: 'cat.png'"
            ),
            None
        );
        let mut code = "img = Image.open('/usr/share/pixmaps/debian-logo.png')\n".to_owned();
        assert_eq!(synthesize_images(&mut code, "", "ValueError: x"), None);
    }
}
