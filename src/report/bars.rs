//! The parameter-importance figure of `moldtune report`: one horizontal bar per parameter,
//! most important on top, its share of the forest's impurity decrease in percent
//! ([`super::importance`]); the part credited from the conditional parameters a switch turns
//! on is drawn in a lighter shade.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::importance::Share;
use super::plot::{self, Area, Drawn, Key, FONT};
use crate::error::Error;

const WIDTH: u32 = 900;
const ROW_PX: u32 = 26;
const OWN: RGBColor = RGBColor(0, 114, 178);
const CREDITED: RGBColor = RGBColor(140, 190, 225);

/// The bars of `shares` (most important first) as an SVG document.
pub fn importance_svg(shares: &[Share]) -> Result<String, Error> {
    let credited = shares.iter().any(|s| s.from_children >= 0.0005);
    let legend = entries(credited);
    let left = label_px(shares);
    let legend_px = match plot::legend_rows(&legend, WIDTH - left) {
        0 => 0,
        rows => rows * plot::LEGEND_ROW_PX + 8,
    };
    let height = 20 + shares.len().max(1) as u32 * ROW_PX + 44 + legend_px;
    plot::svg(WIDTH, height, |root| {
        let (_, h) = root.dim_in_pixel();
        let (top, bottom) = root.split_vertically(h - legend_px);
        draw_bars(&top, shares, left)?;
        plot::legend(&bottom, left as i32, &legend)
    })
}

/// Width of the label area: room for the longest parameter name.
fn label_px(shares: &[Share]) -> u32 {
    let longest = shares.iter().map(|s| s.parameter.chars().count()).max();
    (longest.unwrap_or(4) as u32 * 8 + 24).clamp(80, 300)
}

/// The legend: needed only when some share was credited from conditional parameters.
fn entries(credited: bool) -> Vec<(Key, String)> {
    let square = plot::Shape::Square;
    match credited {
        true => vec![
            (Key::Marker(square, OWN), "its own splits".into()),
            (
                Key::Marker(square, CREDITED),
                "credited from the conditional parameters it switches on".into(),
            ),
        ],
        false => vec![],
    }
}

fn draw_bars(area: &Area, shares: &[Share], left: u32) -> Drawn {
    let k = shares.len();
    // Row 0 is at the bottom: the most important parameter is on top.
    let name = |y: &i32| plot::row_at(*y).and_then(|i| shares.get(k.checked_sub(i + 1)?));
    let top = shares.iter().map(|s| s.importance).fold(0.0, f64::max);
    let x_max = (100.0 * top * 1.15).max(1.0);
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .margin_right(30)
        .x_label_area_size(40)
        .y_label_area_size(left)
        .build_cartesian_2d(0.0..x_max, plot::rows_axis(k))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_label_formatter(&|y| name(y).map_or(String::new(), |s| s.parameter.clone()))
        .x_desc("share of the forest's impurity decrease (%)")
        .x_label_formatter(&|v| crate::number::sig(*v, 3))
        .light_line_style(TRANSPARENT)
        .bold_line_style(BLACK.mix(0.12))
        .label_style((FONT, plot::LABEL_PT))
        .axis_desc_style((FONT, plot::DESC_PT))
        .draw()?;
    for (i, s) in shares.iter().enumerate() {
        draw_bar(&mut chart, plot::row_y(k - 1 - i), s)?;
    }
    Ok(())
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::combinators::WithKeyPoints<plotters::coord::types::RangedCoordi32>,
    >,
>;

/// One parameter's bar at `y`: its own part and the credited part (thick lines along the
/// row), then the percentage.
fn draw_bar(chart: &mut Chart, y: i32, s: &Share) -> Drawn {
    let own = 100.0 * (s.importance - s.from_children);
    let all = 100.0 * s.importance;
    let span = |a: f64, b: f64, color: RGBColor| {
        PathElement::new(vec![(a, y), (b, y)], color.stroke_width(ROW_PX - 8))
    };
    chart.draw_series([span(0.0, own, OWN), span(own, all, CREDITED)])?;
    let style = (FONT, plot::LABEL_PT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let at = (all + 0.01 * chart.x_range().end, y);
    chart.draw_series([Text::new(format!("{all:.1}%"), at, style)])?;
    Ok(())
}
