//! How moldtune writes a number for people: to a few significant digits (tables, axis
//! labels, gains in a metric's units), with its sign when it is a change.

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

/// `sig(v, 4)` with its sign: "+0.083", "-2.5": a change in the metric's units.
pub fn signed(v: f64) -> String {
    match v >= 0.0 {
        true => format!("+{}", sig(v, 4)),
        false => sig(v, 4),
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
    fn changes_carry_their_sign() {
        assert_eq!(signed(0.5), "+0.5");
        assert_eq!(signed(-2.5), "-2.5");
    }
}
