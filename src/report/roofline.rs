//! A run on the machine's roofline (problems that declare their `work:`): the fact line of
//! the report and the summary, and the figure — the roof (bandwidth × intensity up to the
//! peak) on log-log axes, with the default and the best under it.

use plotters::prelude::*;

use crate::error::Error;
use crate::evaluate::roofline::{Reach, Roofline};
use crate::report::plot;
use crate::report::run_dir::RunView;

const WIDTH: u32 = 640;
const HEIGHT: u32 = 400;

/// The roofline and where the default and the best of `run` are on it (by the search's
/// numbers), when the problem declared its work.
pub struct Points {
    pub roofline: Roofline,
    pub default: Option<Reach>,
    pub best: Option<Reach>,
}

impl Points {
    pub fn of(run: &RunView) -> Option<Points> {
        let roofline = run.meta.roofline?;
        let reach = |r: Option<&crate::run::log::Record>| {
            r.and_then(|r| r.m.objective)
                .and_then(|v| roofline.reach(v))
        };
        Some(Points {
            roofline,
            default: reach(run.default_record()),
            best: reach(run.best_record()),
        })
    }

    /// "best 12.30 GFLOP/s, …, 34% of the roofline bound (…); default 4.1 GFLOP/s, …".
    pub fn fact(&self) -> String {
        let mut parts = Vec::new();
        if let Some(b) = &self.best {
            parts.push(format!("best {}", b.describe()));
        }
        if let Some(d) = &self.default {
            parts.push(format!("default {}", d.describe()));
        }
        if self.roofline.limits.is_none() {
            parts.push("no machine limits (a mock run, or the probe failed)".into());
        }
        parts.join("; ")
    }

    /// The figure, when the work states its bytes and the machine's limits are known.
    pub fn svg(&self, title: &str) -> Result<Option<String>, Error> {
        let Some(l) = self.roofline.limits else {
            return Ok(None);
        };
        let points: Vec<(&str, f64, f64)> = [("default", &self.default), ("best", &self.best)]
            .into_iter()
            .filter_map(|(n, r)| r.as_ref().and_then(|r| Some((n, r.intensity?, r.gflops))))
            .collect();
        if points.is_empty() {
            return Ok(None);
        }
        let ((x_lo, x_hi), (y_lo, y_hi), roof) = frame(&points, &l);
        // Axes that are not finite ranges of positive numbers (a machine's limits edited by
        // hand, say) draw nothing honest, and a log axis to infinity never ends.
        let sane = |lo: f64, hi: f64| lo > 0.0 && hi.is_finite() && lo < hi && hi / lo < 1e40;
        if !(sane(x_lo, x_hi) && sane(y_lo, y_hi)) {
            return Ok(None);
        }
        let threads = if l.threads == 1 { "thread" } else { "threads" };
        let caption = format!("{title}: roofline at {} {threads}", l.threads);
        plot::svg(WIDTH, HEIGHT, |root| {
            let mut chart = ChartBuilder::on(root)
                .caption(caption, ("sans-serif", plot::TITLE_PT))
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo..y_hi).log_scale())?;
            chart
                .configure_mesh()
                .x_desc("arithmetic intensity (FLOP/byte)")
                .y_desc("GFLOP/s")
                .draw()?;
            let label = format!(
                "roof: {:.1} GB/s × intensity, peak {:.1} GFLOP/s",
                l.bandwidth_gbs, l.peak_gflops
            );
            chart
                .draw_series(LineSeries::new(roof, BLACK.stroke_width(2)))?
                .label(label)
                .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK));
            for (name, x, y) in points {
                let color = if name == "best" { RED } else { BLUE };
                chart
                    .draw_series([Circle::new((x, y), 5, color.filled())])?
                    .label(format!("{name}: {y:.2} GFLOP/s"))
                    .legend(move |(x, y)| Circle::new((x + 8, y), 4, color.filled()));
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                // Above the bandwidth slope nothing can be: the legend hides no point there.
                .position(SeriesLabelPosition::UpperLeft)
                .draw()
        })
        .map(Some)
    }
}

/// The axes' ranges around the points and the ridge, and the roof's vertices.
type Frame = ((f64, f64), (f64, f64), Vec<(f64, f64)>);

fn frame(points: &[(&str, f64, f64)], l: &crate::evaluate::roofline::Limits) -> Frame {
    let ridge = l.peak_gflops / l.bandwidth_gbs;
    let xs = points.iter().map(|p| p.1).chain([ridge]);
    let (x_lo, x_hi) = (fold(xs.clone(), f64::min) / 4.0, fold(xs, f64::max) * 4.0);
    let ys = (points.iter().map(|p| p.2)).chain([l.peak_gflops, x_lo * l.bandwidth_gbs]);
    // Room above the peak for the legend.
    let (y_lo, y_hi) = (fold(ys.clone(), f64::min) / 2.0, fold(ys, f64::max) * 8.0);
    let roof = [x_lo, ridge, x_hi]
        .iter()
        .map(|&x| (x, (x * l.bandwidth_gbs).min(l.peak_gflops)))
        .collect();
    ((x_lo, x_hi), (y_lo, y_hi), roof)
}

fn fold(v: impl Iterator<Item = f64>, f: fn(f64, f64) -> f64) -> f64 {
    v.reduce(f).unwrap_or(1.0)
}
