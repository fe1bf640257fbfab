//! The convergence plot (the paper's Figure 3): each evaluation's objective against its
//! number, the best so far as a step line, the default configuration's level, and the
//! failures — which have no objective — as markers in a band above the plot, one row and one
//! marker per failure class. The objective axis is logarithmic when the values span more
//! than [`plot::LOG_SPAN`]. `moldtune run` and `moldtune mctree` leave it in their run directory as
//! [`CURVE_SVG`]; `moldtune report` draws it for every run it covers.

use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::format;
use super::plot::{self, Area, Drawn, Key, Shape, FONT};
use crate::error::Error;
use crate::evaluate::outcome::Status;
use crate::report::run_dir::RunView;
use crate::run::front_ends::FrontEnds;
use crate::run::log;
use crate::run::meta;

/// The plot's file in a run directory.
pub const CURVE_SVG: &str = "curve.svg";

const WIDTH: u32 = 900;
/// Height of the plot itself, without the failure band and the legend.
const PLOT_PX: u32 = 440;
/// Width of the label area left of the plot (the axis title and tick labels, or the names
/// of the failure classes in the band).
const LEFT_PX: u32 = 110;
const RIGHT_PX: u32 = 24;
const BAND_ROW_PX: u32 = 20;

/// Draws the convergence plot of the run in `dir` into `dir/curve.svg`.
pub fn write_curve(dir: &Path, fronts: &FrontEnds) -> Result<PathBuf, Error> {
    let run = RunView::load(dir, fronts)?;
    let path = dir.join(CURVE_SVG);
    meta::write_atomic(&path, curve_svg(&run)?.as_bytes())?;
    Ok(path)
}

/// The convergence plot of `run` as an SVG document.
pub fn curve_svg(run: &RunView) -> Result<String, Error> {
    draw(&Curve::of(run))
}

fn draw(c: &Curve) -> Result<String, Error> {
    let band = c.band_px();
    let legend = plot::legend_rows(&c.legend(), WIDTH - LEFT_PX) * plot::LEGEND_ROW_PX + 12;
    let height = 40 + band + PLOT_PX + legend;
    plot::svg(WIDTH, height, |root| {
        let area = root.titled(&c.title, (FONT, plot::TITLE_PT))?;
        let (_, h) = area.dim_in_pixel();
        let (top, rest) = area.split_vertically(band);
        let (main, bottom) = rest.split_vertically(h - band - legend);
        if band > 0 {
            draw_band(&top, c)?;
        }
        let (lo, hi) = c.y_range();
        match c.log_scale() {
            true => {
                let ticks = plot::log_ticks(lo, hi);
                draw_plot(&main, c, (lo..hi).log_scale().with_key_points(ticks))?
            }
            false => draw_plot(&main, c, lo..hi)?,
        }
        plot::legend(&bottom, LEFT_PX as i32, &c.legend())
    })
}

/// What the plot shows, taken from a run.
struct Curve {
    title: String,
    y_label: String,
    evaluations: usize,
    /// (eval_id, objective) of each success.
    successes: Vec<(f64, f64)>,
    /// The eval_ids of each failure class that occurred, in [`Status::ALL`]'s order.
    failures: Vec<(Status, Vec<f64>)>,
    /// The vertices of the best-so-far step line.
    steps: Vec<(f64, f64)>,
    /// The default configuration's objective.
    default: Option<(usize, f64)>,
    /// The run's reported best and whether a verification chose it.
    best: Option<(usize, f64, bool)>,
}

impl Curve {
    fn of(run: &RunView) -> Curve {
        let xy = |r: &log::Record| {
            (r.m.objective.filter(|y| y.is_finite())).map(|y| (r.eval_id as f64, y))
        };
        let failed = |s: Status| -> Vec<f64> {
            (run.records.iter())
                .filter(|r| r.m.status == s)
                .map(|r| r.eval_id as f64)
                .collect()
        };
        let verified = run.winner_record().map(|r| r.eval_id);
        Curve {
            title: run.title(),
            y_label: run.metric_label(),
            evaluations: run.records.len(),
            successes: (run.records.iter())
                .filter(|r| r.m.status == Status::Ok)
                .filter_map(xy)
                .collect(),
            failures: (Status::ALL.into_iter().skip(1))
                .map(|s| (s, failed(s)))
                .filter(|(_, v)| !v.is_empty())
                .collect(),
            steps: steps(&run.best_so_far()),
            default: (run.default_record()).and_then(|r| Some((r.eval_id, r.m.objective?))),
            best: (run.best_record())
                .and_then(|r| Some((r.eval_id, r.m.objective?, verified == Some(r.eval_id)))),
        }
    }

    fn band_px(&self) -> u32 {
        match self.failures.len() as u32 {
            0 => 0,
            k => k * BAND_ROW_PX + 10,
        }
    }

    /// The evaluations with a margin, so that no marker sits on an axis.
    fn x_range(&self) -> std::ops::Range<f64> {
        let n = self.evaluations.max(1) as f64;
        let pad = (n * 0.015).max(0.6);
        -pad..(n - 1.0 + pad)
    }

    /// The objectives drawn: the successes' and the default's.
    fn values(&self) -> impl Iterator<Item = f64> + '_ {
        let default = self.default.map(|d| d.1);
        (self.successes.iter().map(|p| p.1))
            .chain(default)
            .filter(|v| v.is_finite())
    }

    fn log_scale(&self) -> bool {
        let (lo, hi) = self
            .values()
            .fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
        self.values().all(|v| v > 0.0) && hi / lo > plot::LOG_SPAN
    }

    /// The objective axis: the values with a margin (a factor on a log axis).
    fn y_range(&self) -> (f64, f64) {
        let lo = self.values().fold(f64::INFINITY, f64::min);
        let hi = self.values().fold(f64::NEG_INFINITY, f64::max);
        if !lo.is_finite() {
            return (0.0, 1.0);
        }
        if self.log_scale() {
            return (lo / 1.3, hi * 1.3);
        }
        let pad = match hi - lo {
            0.0 => (hi.abs() * 0.05).max(1e-9),
            span => span * 0.06,
        };
        (lo - pad, hi + pad)
    }

    fn legend(&self) -> Vec<(Key, String)> {
        let ok = plot::marker_of(Status::Ok);
        let mut out = vec![
            (
                Key::Marker(ok.0, ok.1),
                format!("ok ({})", self.successes.len()),
            ),
            (Key::Line(BLACK, 2, false), "best so far".into()),
        ];
        if let Some((id, v)) = self.default {
            let label = format!("default (eval {id}): {}", format::objective(v));
            out.push((Key::Line(GREY, 2, true), label));
        }
        if let Some((id, _, verified)) = self.best {
            let how = if verified { ", verified" } else { "" };
            out.push((
                Key::Marker(Shape::Ring, BLACK),
                format!("best: eval {id}{how}"),
            ));
        }
        for (s, evals) in &self.failures {
            let (shape, color) = plot::marker_of(*s);
            out.push((Key::Marker(shape, color), format!("{s} ({})", evals.len())));
        }
        out
    }
}

const GREY: RGBColor = RGBColor(110, 110, 110);

/// The vertices of the step line through the best-so-far values.
fn steps(best: &[Option<f64>]) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (i, b) in best.iter().enumerate() {
        let Some(b) = *b else { continue };
        let x = i as f64;
        match out.last() {
            Some(&(_, prev)) if prev != b => out.extend([(x, prev), (x, b)]),
            Some(_) => {}
            None => out.push((x, b)),
        }
    }
    if let (Some(&(_, b)), n) = (out.last(), best.len()) {
        out.push((n as f64 - 1.0, b));
    }
    out
}

/// The plot: objectives, the default's level, the best-so-far line and the best ringed.
fn draw_plot<Y>(area: &Area, c: &Curve, y: Y) -> Drawn
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin_right(RIGHT_PX)
        .margin_top(6)
        .x_label_area_size(44)
        .y_label_area_size(LEFT_PX)
        .build_cartesian_2d(c.x_range(), y)?;
    chart
        .configure_mesh()
        .x_desc("evaluation")
        .y_desc(c.y_label.as_str())
        .x_label_formatter(&|v| crate::number::sig(*v, 3))
        .y_label_formatter(&|v| crate::number::sig(*v, 3))
        .y_labels(10)
        .light_line_style(TRANSPARENT)
        .bold_line_style(BLACK.mix(0.12))
        .label_style((FONT, plot::LABEL_PT))
        .axis_desc_style((FONT, plot::DESC_PT))
        .draw()?;
    let (x0, x1) = (c.x_range().start, c.x_range().end);
    if let Some((_, d)) = c.default {
        let line = DashedLineSeries::new([(x0, d), (x1, d)], 8, 5, GREY.stroke_width(2));
        chart.draw_series(line)?;
    }
    let (shape, color) = plot::marker_of(Status::Ok);
    plot::markers(&mut chart, &c.successes, shape, color)?;
    chart.draw_series(LineSeries::new(c.steps.clone(), BLACK.stroke_width(2)))?;
    if let Some((id, v, _)) = c.best {
        plot::markers(&mut chart, &[(id as f64, v)], Shape::Ring, BLACK)?;
    }
    if c.successes.is_empty() {
        say_no_successes(&chart.plotting_area().strip_coord_spec())?;
    }
    Ok(())
}

/// Says so in the middle of an empty plot.
fn say_no_successes(plot: &Area) -> Drawn {
    let (w, h) = plot.dim_in_pixel();
    let style = (FONT, plot::DESC_PT).into_font().color(&GREY);
    let centred = style.pos(Pos::new(HPos::Center, VPos::Center));
    let at = (w as i32 / 2, h as i32 / 2);
    plot.draw(&Text::new("no successful evaluation", at, centred))
}

/// The failure band: one row per failure class (the first on top), a marker at each failed
/// evaluation.
fn draw_band(area: &Area, c: &Curve) -> Drawn {
    let rows = c.failures.len();
    // Row 0 is at the bottom: the classes are listed bottom up.
    let name = |y: &i32| plot::row_at(*y).and_then(|i| c.failures.get(rows.checked_sub(i + 1)?));
    let mut chart = ChartBuilder::on(area)
        .margin_right(RIGHT_PX)
        .margin_top(6)
        .y_label_area_size(LEFT_PX)
        .build_cartesian_2d(c.x_range(), plot::rows_axis(rows))?;
    chart.plotting_area().fill(&RGBColor(244, 244, 244))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(BLACK.mix(0.12))
        .y_label_formatter(&|y| name(y).map_or(String::new(), |(s, _)| s.to_string()))
        .label_style((FONT, plot::LABEL_PT))
        .draw()?;
    for (i, (status, evals)) in c.failures.iter().enumerate() {
        let (shape, color) = plot::marker_of(*status);
        let y = plot::row_y(rows - 1 - i);
        let at: Vec<(f64, i32)> = evals.iter().map(|&x| (x, y)).collect();
        plot::markers(&mut chart, &at, shape, color)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_line_holds_each_best_until_the_next() {
        let best = [None, Some(5.0), Some(5.0), Some(3.0), Some(3.0)];
        assert_eq!(
            steps(&best),
            [(1.0, 5.0), (3.0, 5.0), (3.0, 3.0), (4.0, 3.0)]
        );
        assert!(steps(&[None, None]).is_empty());
    }

    /// A curve of `n` evaluations with these successes and failures.
    fn curve(n: usize, successes: Vec<(f64, f64)>, failures: Vec<(Status, Vec<f64>)>) -> Curve {
        Curve {
            title: "t <&>".into(),
            y_label: "kernel time (s)".into(),
            evaluations: n,
            default: successes.first().map(|p| (0, p.1)),
            best: None,
            steps: vec![],
            successes,
            failures,
        }
    }

    #[test]
    fn degenerate_runs_still_draw() {
        let failed = vec![(Status::BuildError, vec![0.0, 1.0])];
        let none = draw(&curve(2, vec![], failed)).unwrap();
        assert!(none.contains("no successful evaluation") && none.contains("build_error"));
        assert!(
            none.contains("t &lt;&amp;&gt;"),
            "plotters escapes the title"
        );
        let empty = draw(&curve(0, vec![], vec![])).unwrap();
        assert!(empty.starts_with("<svg"));
        let flat = curve(3, vec![(0.0, 2.0), (1.0, 2.0), (2.0, 2.0)], vec![]);
        assert!(!flat.log_scale());
        assert!(draw(&flat).unwrap().contains("default (eval 0): 2"));
        let negative = curve(2, vec![(0.0, -1.0), (1.0, 50.0)], vec![]);
        assert!(!negative.log_scale(), "a log axis needs positive values");
        draw(&negative).unwrap();
        let wide = curve(2, vec![(0.0, 0.001), (1.0, 5.0)], vec![]);
        assert!(wide.log_scale());
        draw(&wide).unwrap();
    }

    #[test]
    fn log_ticks_are_round_numbers_in_range() {
        let t = plot::log_ticks(0.045, 1.3);
        let want = [0.05, 0.1, 0.2, 0.5, 1.0];
        assert_eq!(t.len(), want.len(), "{t:?}");
        assert!(
            t.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12),
            "{t:?}"
        );
        assert_eq!(plot::log_ticks(0.0116, 0.26).len(), 8);
        assert_eq!(plot::log_ticks(1e-7, 1e3).len(), 11);
    }
}
