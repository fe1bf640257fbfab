//! How the reports write numbers: objectives and axis labels to a few significant digits,
//! ratios, durations.

/// `v` to `digits` significant digits, trailing zeros dropped; an exponent only for
/// magnitudes below 10⁻⁵ or from 10⁶ on ("0.000586", "12.35", "1.2e-7"); "–" when not finite.
pub fn sig(v: f64, digits: i32) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-5..6).contains(&mag) {
        let mantissa = (digits - 1).max(0) as usize;
        return format!("{v:.mantissa$e}");
    }
    let decimals = (digits - 1 - mag).max(0) as usize;
    let s = format!("{v:.decimals$}");
    match s.contains('.') {
        true => s.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => s,
    }
}

/// An objective in a table: four significant digits.
pub fn objective(v: f64) -> String {
    sig(v, 4)
}

/// A ratio: "2.26×".
pub fn ratio(r: f64) -> String {
    match r.is_finite() {
        true => format!("{r:.2}×"),
        false => "–".into(),
    }
}

/// A duration: "0.4 s", "39 s", "6 min 51 s", "2 h 05 min".
pub fn duration(seconds: f64) -> String {
    if seconds < 10.0 {
        return format!("{seconds:.1} s");
    }
    let s = seconds.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits() {
        assert_eq!(sig(0.000586, 4), "0.000586");
        assert_eq!(sig(0.0195, 3), "0.0195");
        assert_eq!(sig(12.3456, 4), "12.35");
        assert_eq!(sig(100.0, 3), "100");
        assert_eq!(sig(1.5e-7, 3), "1.50e-7");
        assert_eq!(sig(-2.5, 3), "-2.5");
        assert_eq!(sig(f64::NAN, 3), "–");
        assert_eq!(sig(0.0, 3), "0");
    }

    #[test]
    fn durations_and_ratios() {
        assert_eq!(duration(0.42), "0.4 s");
        assert_eq!(duration(39.4), "39 s");
        assert_eq!(duration(411.0), "6 min 51 s");
        assert_eq!(duration(7500.0), "2 h 05 min");
        assert_eq!(ratio(2.2575), "2.26×");
    }
}
