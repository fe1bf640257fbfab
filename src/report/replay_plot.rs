//! The figure of one replayed table (`moldtune replay --figures DIR`): for each variant, the
//! median best-so-far over seeds against evaluations, with its quartiles as a band, as a
//! ratio to the table's optimum on a log axis, and the 5% line the tables count to.

use plotters::prelude::*;

use crate::error::Error;
use crate::report::plot::{self, Area, Drawn, Key, FONT};
use crate::report::replay::LearnerReport;

const WIDTH: u32 = 900;
const PLOT_PX: u32 = 440;
const LEFT_PX: u32 = 70;
/// Evaluations from which on the median curves set the y axis's top.
const INITIAL_SHOWN: usize = 10;

/// Okabe–Ito colours and a grey, one per variant (cycling beyond nine).
const COLORS: [RGBColor; 9] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(230, 159, 0),
    RGBColor(0, 0, 0),
    RGBColor(136, 34, 85),
    RGBColor(150, 150, 150),
];

/// The SVG of `reports` (one per variant, each with its curve at every evaluation) on a
/// table whose optimum is `optimum`; `lower` whether smaller is better.
pub fn replay_svg(
    title: &str,
    reports: &[LearnerReport],
    optimum: f64,
    lower: bool,
) -> Result<String, Error> {
    let legend: Vec<(Key, String)> = (reports.iter().enumerate())
        .map(|(i, r)| (Key::Line(color(i), 3, false), r.label.clone()))
        .collect();
    let legend_px = plot::legend_rows(&legend, WIDTH - LEFT_PX) * plot::LEGEND_ROW_PX + 12;
    plot::svg(WIDTH, 40 + PLOT_PX + legend_px, |root| {
        let area = root.titled(title, (FONT, plot::TITLE_PT))?;
        let (_, h) = area.dim_in_pixel();
        let (main, bottom) = area.split_vertically(h - legend_px);
        draw(&main, reports, optimum, lower)?;
        plot::legend(&bottom, LEFT_PX as i32, &legend)
    })
}

fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

/// The distance to the optimum as a ratio ≥ 1: 1 + how far `v` is behind it as a fraction
/// of its size ([`crate::problem::objective::shortfall`]: best / optimum for a positive time).
fn ratio(v: f64, optimum: f64, lower: bool) -> f64 {
    use crate::problem::Goal;
    let goal = if lower {
        Goal::Minimize
    } else {
        Goal::Maximize
    };
    let r = 1.0 + crate::problem::objective::shortfall(goal, v, optimum);
    if r.is_finite() {
        r
    } else {
        f64::INFINITY
    }
}

/// Ratios labelled on the axis, up to `hi`.
fn ticks(hi: f64) -> Vec<f64> {
    let all = [
        1.0, 1.05, 1.1, 1.2, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0,
    ];
    all.into_iter().filter(|&t| t <= hi * 1.05).collect()
}

fn draw(area: &Area, reports: &[LearnerReport], optimum: f64, lower: bool) -> Drawn {
    let budget = reports.iter().map(|r| r.curve.len()).max().unwrap_or(1) as f64;
    // The axis spans the medians from the end of a typical initial design on: the first
    // evaluations are random draws, often many times the optimum, and would flatten all
    // that differs between learners against the 5% line; they are drawn clipped at the top.
    let hi = (reports
        .iter()
        .flat_map(|r| r.curve.iter().skip(INITIAL_SHOWN - 1)))
    .map(|p| ratio(p.2, optimum, lower))
    .filter(|v| v.is_finite())
    .fold(1.1f64, f64::max)
    .min(100.0);
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(LEFT_PX)
        .build_cartesian_2d(
            1f64..budget,
            (0.995f64..hi * 1.05).log_scale().with_key_points(ticks(hi)),
        )?;
    chart
        .configure_mesh()
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y}"))
        .x_desc("evaluations")
        .y_desc("best so far / optimum (median, quartiles)")
        .label_style((FONT, plot::LABEL_PT))
        .axis_desc_style((FONT, plot::DESC_PT))
        .draw()?;
    let cap = |v: f64| ratio(v, optimum, lower).min(hi * 1.05);
    for (i, r) in reports.iter().enumerate() {
        let c = color(i);
        let (q_lo, q_hi) = if lower { (1, 3) } else { (3, 1) };
        let pick = |p: &(usize, f64, f64, f64), k: usize| [p.1, p.2, p.3][k - 1];
        let upper: Vec<(f64, f64)> = (r.curve.iter())
            .map(|p| (p.0 as f64, cap(pick(p, q_hi))))
            .collect();
        let lower_edge = (r.curve.iter().rev()).map(|p| (p.0 as f64, cap(pick(p, q_lo))));
        let band: Vec<(f64, f64)> = upper.into_iter().chain(lower_edge).collect();
        chart.draw_series([Polygon::new(band, c.mix(0.06).filled())])?;
        let median = (r.curve.iter()).map(|p| (p.0 as f64, cap(p.2)));
        chart.draw_series(LineSeries::new(median, c.stroke_width(3)))?;
    }
    let five = [(1.0, 1.05), (budget, 1.05)];
    chart.draw_series(DashedLineSeries::new(five, 6, 4, BLACK.stroke_width(1)))?;
    Ok(())
}
