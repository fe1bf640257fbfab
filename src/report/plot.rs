//! What the report's figures share: an SVG drawn with plotters into a string, the marker
//! (shape and colour) of each outcome, and a legend row drawn below a chart.
//!
//! Colours are the Okabe–Ito palette (distinguishable with the common colour-vision
//! deficiencies), and every failure class has its own shape as well as its own colour.

use plotters::coord::combinators::WithKeyPoints;
use plotters::coord::types::RangedCoordi32;
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::Error;
use crate::evaluate::outcome::Status;

/// The drawing surface of every figure.
pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// What drawing on it returns.
pub type Drawn = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// The font of every label.
pub const FONT: &str = "sans-serif";

/// Font sizes as plotters takes them (its SVG backend draws them at 1/1.24 of this).
pub const TITLE_PT: u32 = 22;
pub const DESC_PT: u32 = 16;
pub const LABEL_PT: u32 = 14;
const LEGEND_PT: u32 = 15;

/// Width of a character of the legend's font, for laying it out (plotters' own estimate for
/// SVG is narrower than browsers draw).
const CHAR_PX: f64 = 6.8;

/// Draws a `width` × `height` figure with `draw` and returns the SVG document.
pub fn svg(width: u32, height: u32, draw: impl FnOnce(&Area) -> Drawn) -> Result<String, Error> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        let failed = |e: DrawingAreaErrorKind<std::io::Error>| {
            Error::Internal(format!("cannot draw the figure: {e}"))
        };
        root.fill(&WHITE).map_err(failed)?;
        draw(&root).map_err(failed)?;
        root.present().map_err(failed)?;
    }
    Ok(out)
}

/// A marker's shape; its size is fixed in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Dot,
    /// A hollow circle around a point (another marker may sit inside it).
    Ring,
    Cross,
    Plus,
    Diamond,
    Square,
    Triangle,
    TriangleDown,
}

/// How evaluations with `status` are marked.
pub fn marker_of(status: Status) -> (Shape, RGBColor) {
    match status {
        Status::Ok => (Shape::Dot, RGBColor(0, 114, 178)),
        Status::BuildError => (Shape::Cross, RGBColor(213, 94, 0)),
        Status::BuildTimeout => (Shape::Diamond, RGBColor(230, 159, 0)),
        Status::RunError => (Shape::Triangle, RGBColor(204, 121, 167)),
        Status::RunTimeout => (Shape::Square, RGBColor(0, 158, 115)),
        Status::WrongOutput => (Shape::TriangleDown, RGBColor(136, 34, 85)),
        Status::InvalidMetric => (Shape::Plus, RGBColor(90, 90, 90)),
        Status::Lost => (Shape::Plus, RGBColor(180, 180, 180)),
        Status::Pruned => (Shape::Ring, RGBColor(86, 180, 233)),
    }
}

/// Draws the marker `shape` in `color` at each of `at` (the chart's coordinates).
pub fn markers<DB, CT>(
    chart: &mut ChartContext<'_, DB, CT>,
    at: &[CT::From],
    shape: Shape,
    color: RGBColor,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    CT: CoordTranslate,
    CT::From: Clone,
{
    let (fill, line) = (color.filled(), color.stroke_width(2));
    let here = |p: &CT::From| EmptyElement::at(p.clone());
    let polygon = |p: &[(i32, i32)]| {
        let corners = p.to_vec();
        at.iter()
            .map(move |c| here(c) + Polygon::new(corners.clone(), fill))
    };
    match shape {
        Shape::Dot => {
            let dot = color.mix(0.8).filled();
            chart.draw_series(at.iter().map(|c| here(c) + Circle::new((0, 0), 3, dot)))?
        }
        Shape::Ring => {
            chart.draw_series(at.iter().map(|c| here(c) + Circle::new((0, 0), 7, line)))?
        }
        Shape::Cross => {
            chart.draw_series(at.iter().map(|c| here(c) + Cross::new((0, 0), 4, line)))?
        }
        Shape::Plus => chart.draw_series(at.iter().map(|c| {
            here(c)
                + PathElement::new(vec![(-5, 0), (5, 0)], line)
                + PathElement::new(vec![(0, -5), (0, 5)], line)
        }))?,
        Shape::Diamond => chart.draw_series(polygon(&[(0, -5), (5, 0), (0, 5), (-5, 0)]))?,
        Shape::Square => chart.draw_series(polygon(&[(-4, -4), (4, -4), (4, 4), (-4, 4)]))?,
        Shape::Triangle => chart.draw_series(polygon(&[(0, -5), (5, 4), (-5, 4)]))?,
        Shape::TriangleDown => chart.draw_series(polygon(&[(0, 5), (5, -4), (-5, -4)]))?,
    };
    Ok(())
}

/// A vertical axis of `n` labelled rows: row `i` is at [`row_y`]`(i)` in `0..=2n`, with
/// half a row of room on either side, and the rows are its only key points (so a single row
/// gets its label too).
pub fn rows_axis(n: usize) -> WithKeyPoints<RangedCoordi32> {
    let n = n as i32;
    (0..2 * n).with_key_points((0..n).map(|i| 2 * i + 1).collect())
}

/// Where row `i` of a [`rows_axis`] is.
pub fn row_y(i: usize) -> i32 {
    2 * i as i32 + 1
}

/// The row at `y` of a [`rows_axis`], if it is one.
pub fn row_at(y: i32) -> Option<usize> {
    (y > 0 && y % 2 == 1).then_some((y / 2) as usize)
}

/// What a legend entry shows beside its label.
#[derive(Debug, Clone, Copy)]
pub enum Key {
    Marker(Shape, RGBColor),
    /// A line of this colour and width, dashed or solid.
    Line(RGBColor, u32, bool),
}

/// Height of one legend row.
pub const LEGEND_ROW_PX: u32 = 22;

/// An axis is logarithmic when its values are all above 0 and span more than this factor.
pub const LOG_SPAN: f64 = 10.0;

/// The labelled values of a log axis over `lo..=hi`: 1, 2 and 5 times the powers of ten;
/// 1, 1.5, 2, 3, 5 and 7 times them when that gives fewer than five; only the powers when it
/// gives more than 12.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let ticks = |mantissas: &[f64]| -> Vec<f64> {
        let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        (a..=b)
            .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    match ticks(&[1.0, 2.0, 5.0]) {
        t if t.len() < 5 => ticks(&[1.0, 1.5, 2.0, 3.0, 5.0, 7.0]),
        t if t.len() > 12 => ticks(&[1.0]),
        t => t,
    }
}

/// Rows the legend of `entries` takes in `width` pixels.
pub fn legend_rows(entries: &[(Key, String)], width: u32) -> u32 {
    layout(entries, width).last().map_or(0, |&(_, row)| row + 1)
}

/// Each entry's left edge and row, filling rows left to right.
fn layout(entries: &[(Key, String)], width: u32) -> Vec<(i32, u32)> {
    let (mut x, mut row) = (0i32, 0u32);
    let mut out = Vec::with_capacity(entries.len());
    for (_, label) in entries {
        let w = 28 + (label.chars().count() as f64 * CHAR_PX) as i32 + 18;
        if x > 0 && x + w > width as i32 {
            (x, row) = (0, row + 1);
        }
        out.push((x, row));
        x += w;
    }
    out
}

/// Draws the legend of `entries` on `area`, `left` pixels in.
pub fn legend(area: &Area, left: i32, entries: &[(Key, String)]) -> Drawn {
    if entries.is_empty() {
        return Ok(());
    }
    let (w, h) = area.dim_in_pixel();
    // A chart whose coordinates are the area's pixels, y downwards, so that markers are
    // drawn by the same code as in the figures.
    let mut chart = ChartBuilder::on(area).build_cartesian_2d(0..w as i32, h as i32..0)?;
    let text = (FONT, LEGEND_PT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let places = layout(entries, w.saturating_sub(left.max(0) as u32));
    for ((key, label), (x, row)) in entries.iter().zip(places) {
        let (x, y) = (left + x, (row * LEGEND_ROW_PX + LEGEND_ROW_PX / 2) as i32);
        match *key {
            Key::Marker(shape, color) => markers(&mut chart, &[(x + 11, y)], shape, color)?,
            Key::Line(color, width, dashed) => {
                let style = color.stroke_width(width);
                let pieces = match dashed {
                    true => vec![(x, x + 6), (x + 9, x + 14), (x + 17, x + 22)],
                    false => vec![(x, x + 22)],
                };
                let segment = |(a, b): (i32, i32)| PathElement::new(vec![(a, y), (b, y)], style);
                chart.draw_series(pieces.into_iter().map(segment))?;
            }
        }
        chart.draw_series([Text::new(label.clone(), (x + 28, y), text.clone())])?;
    }
    Ok(())
}
