//! Timing a checked variant: `repeats` serial runs under the run timeout, the metric read
//! from each, reduced to the objective (min or median) and its spread
//! ((max − min) / median).

use crate::evaluate::cachegrind;
use crate::evaluate::outcome::{Curve, Step};
use crate::evaluate::outcome::{Measurement, Status};
use crate::evaluate::prune::Pruner;
use crate::evaluate::variant::{run_failure, Build, Ran, Variant, METRIC_TAIL_BYTES};
use crate::problem::progress;
use crate::problem::{MetricKind, Reduce};

/// Run timeouts adapt to the incumbent: a timed run may take at most
/// `ADAPTIVE_FACTOR` × the best variant's run time, but never less than
/// `ADAPTIVE_FLOOR_S` nor more than the problem's `timeouts.run_s`.
pub const ADAPTIVE_FACTOR: f64 = 10.0;
pub const ADAPTIVE_FLOOR_S: f64 = 1.0;

/// A timed run whose spread is above this may not become the best on its first samples
/// alone: it gets [`EXTRA_REPEATS_FACTOR`] × `repeats` more runs first.
pub const CONFIRM_SPREAD: f64 = 0.1;
pub const EXTRA_REPEATS_FACTOR: u32 = 2;

/// The timed runs of a built, checked variant, each cut at `timeout_s`. A variant that
/// would beat `incumbent` (the best objective so far) while its samples spread more than
/// [`CONFIRM_SPREAD`] is timed again before the objective is taken, so that one lucky
/// sample cannot crown a variant.
/// With a `pruner`, each run is watched and may be stopped early (recorded as `pruned`).
pub fn time(
    v: &Variant,
    build: &Build,
    (timeout_s, pruner): (f64, Option<&Pruner>),
    incumbent: Option<f64>,
) -> Step<Measurement> {
    let problem = v.problem;
    let mut samples = Vec::new();
    let mut recorded = Vec::new();
    let mut run_s = 0.0;
    let mut retried = None;
    let mut curve = Vec::new();
    let mut planned = problem.repeats;
    let mut r = 0;
    while r < planned {
        match sample(v, &format!("run{r}"), timeout_s, pruner) {
            Step::Ok(s) => {
                samples.push(s.x);
                recorded.push(s.recorded);
                run_s += s.wall_s;
                retried = retried.or(s.retried);
                curve = s.curve;
            }
            Step::Fail(mut m) => {
                m.compile_s = build.compile_s;
                m.run_s += run_s;
                return Step::Fail(m);
            }
            Step::Stop(s) => return Step::Stop(s),
        }
        r += 1;
        if r == problem.repeats && needs_confirmation(v, &samples, incumbent) {
            planned += EXTRA_REPEATS_FACTOR * problem.repeats;
        }
    }
    let m = measured(samples, build.compile_s, run_s, problem);
    let recorded = reduce_recorded(problem, &recorded);
    Step::Ok(Measurement {
        retried,
        recorded,
        curve,
        ..m
    })
}

/// Each `record:` quantity: the median of the timed runs that printed it.
fn reduce_recorded(
    problem: &crate::problem::Problem,
    runs: &[Vec<Option<f64>>],
) -> std::collections::BTreeMap<String, f64> {
    let values = |k: usize| -> Vec<f64> {
        runs.iter()
            .filter_map(|r| r.get(k).copied().flatten())
            .collect()
    };
    (problem.record.iter().enumerate())
        .filter_map(|(k, q)| {
            let v = values(k);
            (!v.is_empty()).then(|| (q.name.clone(), reduce(&v, Reduce::Median).0))
        })
        .collect()
}

/// One timed run's metric and wall time, why it was run twice if it was, and the problem's
/// `record:` quantities it printed (in the problem's order).
pub struct Sample {
    pub x: f64,
    pub wall_s: f64,
    pub retried: Option<String>,
    pub recorded: Vec<Option<f64>>,
    /// What the run reported as it ran, when it was watched (`progress:`).
    pub curve: Curve,
}

/// Whether the first samples would make a new best but spread too much to trust.
fn needs_confirmation(v: &Variant, samples: &[f64], incumbent: Option<f64>) -> bool {
    let (Some(best), (objective, Some(spread))) = (incumbent, reduce(samples, v.problem.reduce))
    else {
        return false;
    };
    v.problem.metric.goal.better(objective, best) && spread > CONFIRM_SPREAD
}

/// One timed run (watched by `pruner` if there is one): its metric and wall time, or the
/// failure it is recorded as (with this run's wall time as `run_s` and no compile time).
pub fn sample(v: &Variant, tag: &str, timeout_s: f64, pruner: Option<&Pruner>) -> Step<Sample> {
    let ran = match pruner {
        Some(p) => v.run_pruned(tag, timeout_s, p),
        None => v.run_timed(tag, timeout_s),
    };
    let wall_s = ran.finished.wall_s;
    let tail = ran.stdout_tail();
    let stdout = String::from_utf8_lossy(&tail);
    let done = |x| {
        let retried = ran.retried.clone();
        let quantities = v.problem.record.iter();
        let recorded = quantities.map(|q| q.read(&stdout)).collect();
        Step::Ok(Sample {
            x,
            wall_s,
            retried,
            recorded,
            curve: ran.curve.clone(),
        })
    };
    if !ran.finished.success() {
        return failed_run(v, &ran, timeout_s);
    }
    let simulated = v.problem.metric.kind.is_simulated();
    if simulated {
        let m = &v.problem.metric;
        let counted = cachegrind::read(&v.counts(tag), m.kind, m.function.as_ref());
        let _ = std::fs::remove_file(v.counts(tag));
        return match counted {
            Ok(x) => done(x),
            Err(cause) => Step::Fail(Measurement::failed(
                Status::InvalidMetric,
                0.0,
                wall_s,
                cause,
            )),
        };
    }
    match metric(v, &stdout, wall_s, ran.finished.cpu_s) {
        Some(x) => done(x),
        None => Step::Fail(Measurement::failed(
            Status::InvalidMetric,
            0.0,
            wall_s,
            no_metric(&ran, &stdout, &v.problem.metric),
        )),
    }
}

/// The failure a timed run that did not succeed is recorded as; a pruned one carries what
/// it reported (its curve, and its last step and value as the progress quantities).
fn failed_run(v: &Variant, ran: &Ran, timeout_s: f64) -> Step<Sample> {
    let wall_s = ran.finished.wall_s;
    match run_failure(ran, 0.0, wall_s, timeout_s) {
        Step::Fail(m) if v.problem.metric.kind.is_simulated() => {
            Step::Fail(cachegrind::explain(m, &ran.stderr))
        }
        Step::Fail(mut m) if m.status == Status::Pruned => {
            if let Some(&(step, value)) = ran.curve.last() {
                m.recorded.insert(progress::STEP.into(), step);
                m.recorded.insert(progress::VALUE.into(), value);
            }
            m.curve = ran.curve.clone();
            Step::Fail(m)
        }
        failed => failed,
    }
}

/// Why no metric was read: the last lines read, and the window read when the output is
/// longer than it.
fn no_metric(ran: &Ran, stdout: &str, metric: &crate::problem::Metric) -> String {
    let last: Vec<&str> = stdout.lines().rev().take(3).collect();
    let size = std::fs::metadata(&ran.stdout).map_or(0, |m| m.len());
    let window = match size > METRIC_TAIL_BYTES {
        true => format!(
            " (read from its last {} KiB of {size} bytes: print the metric near the end)",
            METRIC_TAIL_BYTES >> 10
        ),
        false => String::new(),
    };
    let sought = match &metric.regex {
        Some(r) => format!("no match for the metric's regex `{}`", r.as_str()),
        None => "no line that is a number alone (the kernel time)".to_string(),
    };
    format!(
        "{sought} in the program's stdout{window} (last lines: `{}`)",
        last.join(" | ")
    )
}

fn metric(v: &Variant, stdout: &str, wall_s: f64, cpu_s: f64) -> Option<f64> {
    let m = &v.problem.metric;
    match m.kind {
        MetricKind::KernelTime => parse_kernel_time(stdout),
        MetricKind::WallTime => Some(wall_s),
        MetricKind::CpuTime => Some(cpu_s),
        MetricKind::Regex => m.regex.as_ref().and_then(|r| parse_regex(r, stdout)),
        MetricKind::Instructions | MetricKind::Cycles => None,
    }
}

fn measured(
    samples: Vec<f64>,
    compile_s: f64,
    run_s: f64,
    p: &crate::problem::Problem,
) -> Measurement {
    let (objective, spread) = reduce(&samples, p.reduce);
    Measurement {
        objective: Some(objective),
        repeats: samples.len() as u32,
        spread,
        samples,
        cause: None,
        ..Measurement::failed(Status::Ok, compile_s, run_s, String::new())
    }
}

/// The kernel time printed by the program: the last stdout line that is a number alone.
pub fn parse_kernel_time(stdout: &str) -> Option<f64> {
    stdout
        .lines()
        .rev()
        .find_map(|l| l.trim().parse::<f64>().ok())
        .filter(|x| x.is_finite())
}

/// The first group (or the whole match) of the regex's last match on stdout.
pub fn parse_regex(re: &regex::Regex, stdout: &str) -> Option<f64> {
    let caps = re.captures_iter(stdout).last()?;
    let m = caps.get(1).or(caps.get(0))?;
    m.as_str()
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
}

/// Reduces timed samples; returns (objective, spread).
pub fn reduce(samples: &[f64], how: Reduce) -> (f64, Option<f64>) {
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    let median = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    let obj = match how {
        Reduce::Min => s[0],
        Reduce::Median => median,
    };
    let spread = (n >= 2 && median > 0.0).then(|| (s[n - 1] - s[0]) / median);
    (obj, spread)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_time_is_the_last_number_line() {
        assert_eq!(parse_kernel_time("hello\n0.25\n"), Some(0.25));
        assert_eq!(parse_kernel_time("0.1\ntime 3\n"), Some(0.1));
        assert_eq!(parse_kernel_time("nothing here\n"), None);
        assert_eq!(parse_kernel_time("inf\n"), None);
    }

    #[test]
    fn reduce_min_median_spread() {
        let (m, s) = reduce(&[3.0, 1.0, 2.0], Reduce::Median);
        assert_eq!(m, 2.0);
        assert_eq!(s, Some(1.0));
        assert_eq!(reduce(&[3.0, 1.0, 2.0, 4.0], Reduce::Min).0, 1.0);
        assert_eq!(reduce(&[3.0, 1.0, 2.0, 4.0], Reduce::Median).0, 2.5);
        assert_eq!(reduce(&[5.0], Reduce::Median).1, None);
    }

    #[test]
    fn regex_metric_takes_group_one_of_last_match() {
        let re = regex::Regex::new(r"gflops=([0-9.]+)").unwrap();
        assert_eq!(parse_regex(&re, "gflops=1.5\ngflops=2.5\n"), Some(2.5));
        assert_eq!(parse_regex(&re, "none"), None);
    }
}
