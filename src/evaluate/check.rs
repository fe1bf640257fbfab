//! The output check: one untimed run of the variant with `check.env` added, its
//! `check.stream` compared with the reference's output, first byte for byte, then number by
//! number with a tolerance `|a − b| ≤ atol + rtol · max(|a|, |b|)`.
//!
//! Same-flag builds usually match exactly; a reference built with other flags differs in the
//! last digits (FMA contraction), which the tolerance absorbs. An illegal loop order or a race
//! changes values far beyond it.

use crate::evaluate::outcome::{Measurement, Status};
use crate::evaluate::variant::{run_failure, Build, Ran, Step, Variant};
use crate::problem::{CheckMode, Stream};

/// The check run of a built variant against `reference` → ok, `wrong_output`, `run_error`
/// or `run_timeout`. The run also warms caches for the timed runs.
pub fn check_output(v: &Variant, build: &Build, reference: &[u8]) -> Step<()> {
    let problem = v.problem;
    if problem.check.mode == CheckMode::None {
        return Step::Ok(());
    }
    let timeout_s = problem.run_timeout_s;
    let ran = match v.run(&problem.check.env, "check", timeout_s) {
        Ok(r) => r,
        Err(e) => {
            let m = Measurement::failed(Status::RunError, build.compile_s, 0.0, e);
            return Step::Fail(m);
        }
    };
    let wall_s = ran.finished.wall_s;
    if !ran.finished.success() {
        return run_failure(&ran, build.compile_s, wall_s, timeout_s);
    }
    let (rtol, atol) = (problem.check.rtol, problem.check.atol);
    match compare(reference, checked_stream(v, &ran), rtol, atol) {
        Ok(()) => Step::Ok(()),
        Err(why) => Step::Fail(Measurement::failed(
            Status::WrongOutput,
            build.compile_s,
            wall_s,
            why,
        )),
    }
}

/// The stream of a check run that is compared (`check.stream`).
pub fn checked_stream<'r>(v: &Variant, ran: &'r Ran) -> &'r [u8] {
    match v.problem.check.stream {
        Stream::Stdout => &ran.stdout,
        Stream::Stderr => &ran.stderr,
    }
}

/// `Ok(())` when the outputs agree, otherwise a one-line description of the mismatch.
pub fn compare(reference: &[u8], output: &[u8], rtol: f64, atol: f64) -> Result<(), String> {
    if reference == output {
        return Ok(());
    }
    let r = String::from_utf8_lossy(reference);
    let o = String::from_utf8_lossy(output);
    let rt: Vec<&str> = r.split_whitespace().collect();
    let ot: Vec<&str> = o.split_whitespace().collect();
    if rt.len() != ot.len() {
        return Err(format!(
            "output has {} tokens, the reference {}",
            ot.len(),
            rt.len()
        ));
    }
    let mut bad = 0usize;
    let mut numbers = 0usize;
    let mut worst: Option<(usize, f64, String, String)> = None;
    for (k, (a, b)) in rt.iter().zip(&ot).enumerate() {
        match (a.parse::<f64>(), b.parse::<f64>()) {
            (Ok(x), Ok(y)) => {
                numbers += 1;
                let diff = (x - y).abs();
                let ok = diff <= atol + rtol * x.abs().max(y.abs()) || (x.is_nan() && y.is_nan());
                if !ok {
                    bad += 1;
                    let rel = diff / x.abs().max(y.abs()).max(f64::MIN_POSITIVE);
                    if worst.as_ref().is_none_or(|w| rel > w.1 || rel.is_nan()) {
                        worst = Some((k, rel, a.to_string(), b.to_string()));
                    }
                }
            }
            _ if a == b => {}
            _ => {
                bad += 1;
                if worst.is_none() {
                    worst = Some((k, f64::INFINITY, a.to_string(), b.to_string()));
                }
            }
        }
    }
    match worst {
        None => Ok(()),
        Some((k, rel, a, b)) => Err(format!(
            "{bad} of {} values differ beyond rtol {rtol:e}; worst at value #{k}: expected `{a}`, got `{b}` (relative error {rel:.3e})",
            numbers.max(bad)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_tolerant_matches() {
        assert!(compare(b"1 2 3", b"1 2 3", 0.0, 0.0).is_ok());
        assert!(compare(b"1.0000000001 2", b"1 2", 1e-6, 0.0).is_ok());
        assert!(compare(b"begin 1\nend", b"begin   1\nend", 0.0, 0.0).is_ok());
    }

    #[test]
    fn mismatches_are_counted_and_described() {
        let e = compare(b"1 2 3 4", b"1 2.5 3 9", 1e-6, 0.0).unwrap_err();
        assert!(e.starts_with("2 of 4 values differ"), "{e}");
        assert!(e.contains("expected `4`, got `9`"), "{e}");
        assert!(compare(b"1 2", b"1 2 3", 1e-6, 0.0)
            .unwrap_err()
            .contains("3 tokens"));
        assert!(compare(b"a 1", b"b 1", 1e-6, 0.0).is_err());
    }
}
