//! The loss curve of a training run as a PNG (`loss.png` beside `loss.csv`).
//!
//! Drawn pixel by pixel with a built-in 5×7 font and encoded with the `png` crate, so
//! that it needs no system fonts or libraries on any machine that trains.

use std::path::Path;

/// Why the curve could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("cannot read {path}: {source}; train first (replayground train --out DIR) or point at a checkpoint folder")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} has no loss rows yet; train for at least one step")]
    Empty { path: String },
    #[error("cannot write {path}: {message}")]
    Write { path: String, message: String },
}

/// The rows of `loss.csv` that a plot needs.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LossLog {
    /// (step, train loss).
    pub train: Vec<(f64, f64)>,
    /// (step, held-out loss), logged every `eval_every` steps.
    pub heldout: Vec<(f64, f64)>,
}

impl LossLog {
    /// Parses `step,tokens,train_loss,heldout_loss,...` rows; a repeated header (a
    /// resumed run) and malformed rows are skipped.
    pub fn parse(csv: &str) -> Self {
        let mut log = Self::default();
        for row in csv.lines() {
            let cols: Vec<&str> = row.split(',').collect();
            let (Some(step), Some(train)) = (
                cols.first().and_then(|c| c.parse::<f64>().ok()),
                cols.get(2).and_then(|c| c.parse::<f64>().ok()),
            ) else {
                continue;
            };
            log.train.push((step, train));
            if let Some(h) = cols.get(3).and_then(|c| c.parse::<f64>().ok()) {
                log.heldout.push((step, h));
            }
        }
        log
    }
}

/// Reads `dir/loss.csv` and writes `dir/loss.png`.
pub fn plot_dir(dir: &Path) -> Result<std::path::PathBuf, PlotError> {
    let csv = dir.join("loss.csv");
    let text = std::fs::read_to_string(&csv).map_err(|source| PlotError::Read {
        path: csv.display().to_string(),
        source,
    })?;
    let log = LossLog::parse(&text);
    if log.train.is_empty() {
        return Err(PlotError::Empty {
            path: csv.display().to_string(),
        });
    }
    let out = dir.join("loss.png");
    write_png(&render(&log), &out)?;
    Ok(out)
}

/// An RGB image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Image {
    fn new(width: u32, height: u32) -> Self {
        Self {
            width,
            height,
            rgb: vec![255; (width * height * 3) as usize],
        }
    }

    fn put(&mut self, x: i64, y: i64, color: [u8; 3]) {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return;
        }
        let at = ((y as u32 * self.width + x as u32) * 3) as usize;
        self.rgb[at..at + 3].copy_from_slice(&color);
    }

    fn rect(&mut self, x: i64, y: i64, w: i64, h: i64, color: [u8; 3]) {
        for dy in 0..h {
            for dx in 0..w {
                self.put(x + dx, y + dy, color);
            }
        }
    }

    /// A line `thickness` pixels wide (Bresenham, with a square pen).
    fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), thickness: i64, color: [u8; 3]) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        loop {
            self.rect(x - thickness / 2, y - thickness / 2, thickness, thickness, color);
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Text in the built-in font, `scale` pixels per font pixel, top-left at (x, y).
    fn text(&mut self, x: i64, y: i64, text: &str, scale: i64, color: [u8; 3]) {
        for (i, c) in text.chars().enumerate() {
            let rows = glyph(c);
            for (r, bits) in rows.iter().enumerate() {
                for col in 0..5 {
                    if bits & (0b10000 >> col) != 0 {
                        self.rect(
                            x + (i as i64 * 6 + col) * scale,
                            y + r as i64 * scale,
                            scale,
                            scale,
                            color,
                        );
                    }
                }
            }
        }
    }
}

/// Width in pixels of `text` at `scale`.
fn text_width(text: &str, scale: i64) -> i64 {
    (text.chars().count() as i64 * 6 - 1).max(0) * scale
}

/// 5×7 glyphs for the characters a loss plot writes; anything else is blank.
fn glyph(c: char) -> [u8; 7] {
    match c {
        '0' => [0b01110, 0b10001, 0b10011, 0b10101, 0b11001, 0b10001, 0b01110],
        '1' => [0b00100, 0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110],
        '2' => [0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b01000, 0b11111],
        '3' => [0b11110, 0b00001, 0b00001, 0b01110, 0b00001, 0b00001, 0b11110],
        '4' => [0b00010, 0b00110, 0b01010, 0b10010, 0b11111, 0b00010, 0b00010],
        '5' => [0b11111, 0b10000, 0b11110, 0b00001, 0b00001, 0b10001, 0b01110],
        '6' => [0b00110, 0b01000, 0b10000, 0b11110, 0b10001, 0b10001, 0b01110],
        '7' => [0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b01000, 0b01000],
        '8' => [0b01110, 0b10001, 0b10001, 0b01110, 0b10001, 0b10001, 0b01110],
        '9' => [0b01110, 0b10001, 0b10001, 0b01111, 0b00001, 0b00010, 0b01100],
        '.' => [0, 0, 0, 0, 0, 0b01100, 0b01100],
        '-' => [0, 0, 0, 0b11111, 0, 0, 0],
        'a' => [0, 0, 0b01110, 0b00001, 0b01111, 0b10001, 0b01111],
        'd' => [0b00001, 0b00001, 0b01101, 0b10011, 0b10001, 0b10001, 0b01111],
        'e' => [0, 0, 0b01110, 0b10001, 0b11111, 0b10000, 0b01110],
        'h' => [0b10000, 0b10000, 0b10110, 0b11001, 0b10001, 0b10001, 0b10001],
        'i' => [0b00100, 0, 0b01100, 0b00100, 0b00100, 0b00100, 0b01110],
        'l' => [0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110],
        'n' => [0, 0, 0b10110, 0b11001, 0b10001, 0b10001, 0b10001],
        'o' => [0, 0, 0b01110, 0b10001, 0b10001, 0b10001, 0b01110],
        'p' => [0, 0, 0b11110, 0b10001, 0b11110, 0b10000, 0b10000],
        'r' => [0, 0, 0b10110, 0b11001, 0b10000, 0b10000, 0b10000],
        's' => [0, 0, 0b01110, 0b10000, 0b01110, 0b00001, 0b11110],
        't' => [0b01000, 0b01000, 0b11100, 0b01000, 0b01000, 0b01001, 0b00110],
        'u' => [0, 0, 0b10001, 0b10001, 0b10001, 0b10011, 0b01101],
        _ => [0; 7],
    }
}

/// A "nice" tick spacing (1, 2 or 5 × 10^n) giving about `count` ticks over `span`.
fn tick_step(span: f64, count: f64) -> f64 {
    let raw = (span / count).max(f64::MIN_POSITIVE);
    let magnitude = 10f64.powf(raw.log10().floor());
    let fraction = raw / magnitude;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

fn label(value: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    format!("{value:.decimals$}")
}

const TRAIN: [u8; 3] = [31, 119, 180];
const HELDOUT: [u8; 3] = [230, 120, 20];
const AXIS: [u8; 3] = [60, 60, 60];
const GRID: [u8; 3] = [225, 225, 225];

/// Draws the train and held-out loss against the step.
pub fn render(log: &LossLog) -> Image {
    let (width, height) = (900u32, 540u32);
    let (left, right, top, bottom) = (80i64, 24i64, 48i64, 64i64);
    let (plot_w, plot_h) = (i64::from(width) - left - right, i64::from(height) - top - bottom);
    let mut img = Image::new(width, height);

    let all = log.train.iter().chain(&log.heldout);
    let x_max = all.clone().map(|p| p.0).fold(1.0f64, f64::max);
    let y_max = all
        .map(|p| p.1)
        .filter(|y| y.is_finite())
        .fold(0.0f64, f64::max)
        .max(1e-3);
    let (x_step, y_step) = (tick_step(x_max, 6.0), tick_step(y_max, 6.0));
    let (x_top, y_top) = ((x_max / x_step).ceil() * x_step, (y_max / y_step).ceil() * y_step);
    let px = |x: f64| left + ((x / x_top) * plot_w as f64).round() as i64;
    let py = |y: f64| top + plot_h - ((y / y_top) * plot_h as f64).round() as i64;

    // Grid and tick labels.
    let mut t = 0.0;
    while t <= y_top + y_step / 2.0 {
        let y = py(t);
        img.line((left, y), (left + plot_w, y), 1, GRID);
        let text = label(t, y_step);
        img.text(left - 10 - text_width(&text, 2), y - 7, &text, 2, AXIS);
        t += y_step;
    }
    let mut t = 0.0;
    while t <= x_top + x_step / 2.0 {
        let x = px(t);
        img.line((x, top), (x, top + plot_h), 1, GRID);
        let text = label(t, x_step);
        img.text(x - text_width(&text, 2) / 2, top + plot_h + 10, &text, 2, AXIS);
        t += x_step;
    }
    img.line((left, top), (left, top + plot_h), 2, AXIS);
    img.line((left, top + plot_h), (left + plot_w, top + plot_h), 2, AXIS);

    // Curves: the noisy train loss thin, the held-out loss thick on top.
    for pair in log.train.windows(2) {
        img.line((px(pair[0].0), py(pair[0].1)), (px(pair[1].0), py(pair[1].1)), 1, TRAIN);
    }
    for pair in log.heldout.windows(2) {
        img.line(
            (px(pair[0].0), py(pair[0].1)),
            (px(pair[1].0), py(pair[1].1)),
            3,
            HELDOUT,
        );
    }
    for &(x, y) in &log.heldout {
        img.rect(px(x) - 3, py(y) - 3, 7, 7, HELDOUT);
    }

    // Title, axis name, legend.
    img.text(left, 14, "loss", 3, AXIS);
    let step = "step";
    img.text(
        left + plot_w / 2 - text_width(step, 2) / 2,
        i64::from(height) - 26,
        step,
        2,
        AXIS,
    );
    let legend_x = left + plot_w - 260;
    img.rect(legend_x, 20, 24, 4, TRAIN);
    img.text(legend_x + 32, 15, "train", 2, AXIS);
    img.rect(legend_x + 120, 20, 24, 4, HELDOUT);
    img.text(legend_x + 152, 15, "held-out", 2, AXIS);
    img
}

/// Encodes `image` as an 8-bit RGB PNG at `path`.
pub fn write_png(image: &Image, path: &Path) -> Result<(), PlotError> {
    let fail = |message: String| PlotError::Write {
        path: path.display().to_string(),
        message,
    };
    let file = std::fs::File::create(path).map_err(|e| fail(e.to_string()))?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), image.width, image.height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| fail(e.to_string()))?;
    writer.write_image_data(&image.rgb).map_err(|e| fail(e.to_string()))?;
    writer.finish().map_err(|e| fail(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_skips_headers_and_keeps_heldout_rows() {
        let log = LossLog::parse(
            "step,tokens,train_loss,heldout_loss,learning_rate,tokens_per_second\n1,8,7.1,,1e-3,10\n2,16,6.5,6.6,1e-3,10\nstep,tokens,train_loss\n3,24,6.0,,1e-3,10\n",
        );
        assert_eq!(log.train, [(1.0, 7.1), (2.0, 6.5), (3.0, 6.0)]);
        assert_eq!(log.heldout, [(2.0, 6.6)]);
    }

    #[test]
    fn ticks_are_nice_numbers() {
        assert!((tick_step(1200.0, 6.0) - 200.0).abs() < 1e-9);
        assert!((tick_step(7.2, 6.0) - 2.0).abs() < 1e-9);
        assert_eq!(label(0.5, 0.5), "0.5");
        assert_eq!(label(400.0, 200.0), "400");
    }

    #[test]
    fn the_plot_draws_both_curves_and_round_trips_as_png() {
        let log = LossLog {
            train: (1..=100).map(|s| (f64::from(s), 7.0 / f64::from(s).sqrt())).collect(),
            heldout: (1..=10)
                .map(|s| (f64::from(s * 10), 7.5 / f64::from(s * 10).sqrt()))
                .collect(),
        };
        let image = render(&log);
        let count = |c: [u8; 3]| image.rgb.chunks(3).filter(|p| *p == c).count();
        assert!(count(TRAIN) > 500, "the train curve is drawn");
        assert!(count(HELDOUT) > 500, "the held-out curve is drawn");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("loss.png");
        write_png(&image, &path).unwrap();
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
        let reader = decoder.read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (image.width, image.height));
    }
}
