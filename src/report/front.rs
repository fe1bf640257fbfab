//! The trade-off figure of `moldtune report` for a problem with a tie rule (`prefer:`): every
//! successful evaluation's objective against the rule's quantity, the front (those no other
//! beats on both, [`crate::run::prefer::front`]) joined and marked, and the preferred
//! configuration ringed; each front point is labelled with its eval id, the tie rule's
//! band (the objectives counted as equal to the best) is shaded, and an axis whose values
//! span more than [`plot::LOG_SPAN`] is logarithmic.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use super::plot::{self, Area, Drawn, Key, Shape, FONT};
use crate::error::Error;
use crate::report::run_dir::RunView;
use crate::run::prefer;

const WIDTH: u32 = 900;
const PLOT_PX: u32 = 420;
const ALL: RGBColor = RGBColor(150, 150, 150);
const FRONT: RGBColor = RGBColor(0, 114, 178);
const PREFERRED: RGBColor = RGBColor(213, 94, 0);
const BAND: RGBColor = RGBColor(240, 228, 66);

/// The points of the figure: (quantity, objective) of every success with the quantity, of
/// the front (with their eval ids), and of the preferred evaluation; the tie rule's band.
struct Points {
    all: Vec<(f64, f64)>,
    front: Vec<(f64, f64)>,
    front_ids: Vec<usize>,
    preferred: Option<(f64, f64)>,
    /// The objectives counted as equal to the best: (low, high).
    band: Option<(f64, f64)>,
    x_label: String,
    y_label: String,
}

/// The figure for `run`; `None` when its problem has no tie rule or nothing to show.
pub fn front_svg(run: &RunView) -> Result<Option<String>, Error> {
    let Some(p) = points(run) else {
        return Ok(None);
    };
    let legend = [
        (Key::Marker(Shape::Dot, ALL), "evaluation".to_string()),
        (
            Key::Line(FRONT, 2, false),
            "front (no other is better on both)".into(),
        ),
        (
            Key::Marker(Shape::Ring, PREFERRED),
            "preferred by the tie rule".into(),
        ),
        (
            Key::Line(BAND, 8, false),
            "within the tie rule's band of the best".into(),
        ),
    ];
    let legend_px = plot::legend_rows(&legend, WIDTH - 110) * plot::LEGEND_ROW_PX + 12;
    plot::svg(WIDTH, PLOT_PX + legend_px, |root| {
        let (main, bottom) = root.split_vertically(PLOT_PX);
        draw(&main, &p)?;
        plot::legend(&bottom, 110, &legend)
    })
    .map(Some)
}

fn points(run: &RunView) -> Option<Points> {
    let rule = run.problem.prefer.as_ref()?;
    let at =
        |r: &crate::run::log::Record| Some((prefer::quantity(r, &rule.quantity)?, r.m.objective?));
    let all: Vec<(f64, f64)> = (prefer::points(&run.records, rule).into_iter())
        .map(|(_, y, q)| (q, y))
        .collect();
    if all.is_empty() {
        return None;
    }
    let mut front: Vec<(f64, f64, usize)> = (prefer::front(&run.problem, &run.records).iter())
        .filter_map(|r| at(r).map(|(x, y)| (x, y, r.eval_id)))
        .collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    let best = crate::run::log::best(&run.records, run.problem.metric.goal)?
        .m
        .objective?;
    let w = rule.within.width(best);
    Some(Points {
        preferred: prefer::preferred(&run.problem, &run.records).and_then(at),
        all,
        front_ids: front.iter().map(|f| f.2).collect(),
        front: front.iter().map(|f| (f.0, f.1)).collect(),
        band: (w > 0.0).then_some((best - w, best + w)),
        x_label: rule.quantity.clone(),
        y_label: run.metric_label(),
    })
}

/// The range of `v` with a margin of 5% (or ±1 around a single value).
fn range(v: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = v.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let pad = if hi > lo {
        0.05 * (hi - lo)
    } else {
        lo.abs().max(1.0) * 0.05
    };
    (lo - pad)..(hi + pad)
}

/// A log axis (over the values with a margin of a factor 1.3) when they are all above 0 and
/// span more than [`plot::LOG_SPAN`]: one 4.5 s point must not squash the rest.
fn log_range(v: impl Iterator<Item = f64> + Clone) -> Option<(f64, f64)> {
    let lo = v.clone().fold(f64::INFINITY, f64::min);
    let hi = v.fold(f64::NEG_INFINITY, f64::max);
    (lo > 0.0 && hi / lo > plot::LOG_SPAN).then_some((lo / 1.3, hi * 1.3))
}

/// Draws on a linear or log axis each way, by the values' span.
fn draw(area: &Area, p: &Points) -> Drawn {
    let xs = p.all.iter().map(|a| a.0);
    let ys = p.all.iter().map(|a| a.1);
    let log = |(lo, hi): (f64, f64)| {
        (lo..hi)
            .log_scale()
            .with_key_points(plot::log_ticks(lo, hi))
    };
    match (log_range(xs.clone()), log_range(ys.clone())) {
        (Some(x), Some(y)) => draw_on(area, p, log(x), log(y)),
        (Some(x), None) => draw_on(area, p, log(x), range(ys)),
        (None, Some(y)) => draw_on(area, p, range(xs), log(y)),
        (None, None) => draw_on(area, p, range(xs), range(ys)),
    }
}

fn draw_on<X, Y>(area: &Area, p: &Points, x: X, y: Y) -> Drawn
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .margin_right(30)
        .x_label_area_size(48)
        .y_label_area_size(98)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .x_desc(&p.x_label)
        .y_desc(&p.y_label)
        .x_label_formatter(&|v| crate::number::sig(*v, 3))
        .y_label_formatter(&|v| crate::number::sig(*v, 4))
        .light_line_style(TRANSPARENT)
        .bold_line_style(BLACK.mix(0.12))
        .label_style((FONT, plot::LABEL_PT))
        .axis_desc_style((FONT, plot::DESC_PT))
        .draw()?;
    if let Some((lo, hi)) = p.band {
        let (x0, x1) = (chart.x_range().start, chart.x_range().end);
        let (y0, y1) = (chart.y_range().start, chart.y_range().end);
        let (lo, hi) = (lo.max(y0), hi.min(y1));
        chart.draw_series([Rectangle::new(
            [(x0, lo), (x1, hi)],
            BAND.mix(0.35).filled(),
        )])?;
    }
    plot::markers(&mut chart, &p.all, Shape::Dot, ALL)?;
    chart.draw_series([PathElement::new(p.front.clone(), FRONT.stroke_width(2))])?;
    plot::markers(&mut chart, &p.front, Shape::Dot, FRONT)?;
    // Each front point's eval id, a little above and right of its dot.
    let style = (FONT, plot::LABEL_PT - 2).into_font().color(&FRONT);
    let label = |(&at, id): (&(f64, f64), &usize)| {
        EmptyElement::at(at) + Text::new(format!("{id}"), (6, -16), style.clone())
    };
    chart.draw_series(p.front.iter().zip(&p.front_ids).map(label))?;
    if let Some(at) = p.preferred {
        plot::markers(&mut chart, &[at], Shape::Ring, PREFERRED)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_axis_is_logarithmic_when_its_values_span_over_ten_times() {
        let wide = [0.05, 0.07, 0.1, 4.5];
        assert_eq!(
            log_range(wide.iter().copied()),
            Some((0.05 / 1.3, 4.5 * 1.3))
        );
        let narrow = [0.9, 0.95, 0.97];
        assert_eq!(log_range(narrow.iter().copied()), None);
        let signed = [-1.0, 20.0];
        assert_eq!(log_range(signed.iter().copied()), None);
    }
}
