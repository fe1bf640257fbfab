//! The trade-off figure of `moldtune report` for a problem with a tie rule (`prefer:`): every
//! successful evaluation's objective against the rule's quantity, the front (those no other
//! beats on both, [`crate::run::prefer::front`]) joined and marked, and the preferred
//! configuration ringed.

use plotters::prelude::*;

use super::plot::{self, Area, Drawn, Key, Shape, FONT};
use super::run_dir::RunDir;
use crate::error::Error;
use crate::run::prefer;

const WIDTH: u32 = 900;
const PLOT_PX: u32 = 420;
const ALL: RGBColor = RGBColor(150, 150, 150);
const FRONT: RGBColor = RGBColor(0, 114, 178);
const PREFERRED: RGBColor = RGBColor(213, 94, 0);

/// The points of the figure: (quantity, objective) of every success with the quantity, of
/// the front, and of the preferred evaluation.
struct Points {
    all: Vec<(f64, f64)>,
    front: Vec<(f64, f64)>,
    preferred: Option<(f64, f64)>,
    x_label: String,
    y_label: String,
}

/// The figure for `run`; `None` when its problem has no tie rule or nothing to show.
pub fn front_svg(run: &RunDir) -> Result<Option<String>, Error> {
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
    ];
    let legend_px = plot::legend_rows(&legend, WIDTH - 110) * plot::LEGEND_ROW_PX + 12;
    plot::svg(WIDTH, PLOT_PX + legend_px, |root| {
        let (main, bottom) = root.split_vertically(PLOT_PX);
        draw(&main, &p)?;
        plot::legend(&bottom, 110, &legend)
    })
    .map(Some)
}

fn points(run: &RunDir) -> Option<Points> {
    let rule = run.problem.prefer.as_ref()?;
    let at =
        |r: &crate::run::log::Record| Some((prefer::quantity(r, &rule.quantity)?, r.m.objective?));
    let all: Vec<(f64, f64)> = (prefer::points(&run.records, rule).into_iter())
        .map(|(_, y, q)| (q, y))
        .collect();
    if all.is_empty() {
        return None;
    }
    let mut front: Vec<(f64, f64)> = (prefer::front(&run.problem, &run.records).into_iter())
        .filter_map(at)
        .collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(Points {
        preferred: prefer::preferred(&run.problem, &run.records).and_then(at),
        all,
        front,
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

fn draw(area: &Area, p: &Points) -> Drawn {
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .margin_right(30)
        .x_label_area_size(48)
        .y_label_area_size(98)
        .build_cartesian_2d(
            range(p.all.iter().map(|a| a.0)),
            range(p.all.iter().map(|a| a.1)),
        )?;
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
    plot::markers(&mut chart, &p.all, Shape::Dot, ALL)?;
    chart.draw_series([PathElement::new(p.front.clone(), FRONT.stroke_width(2))])?;
    plot::markers(&mut chart, &p.front, Shape::Dot, FRONT)?;
    if let Some(at) = p.preferred {
        plot::markers(&mut chart, &[at], Shape::Ring, PREFERRED)?;
    }
    Ok(())
}
