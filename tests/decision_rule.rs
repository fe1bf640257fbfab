//! The check's decision rule on simulated measurements with this machine's noise, no
//! compiler: unchanged code raises no more than 1% false alarms and a 15% slowdown is
//! caught at least 95% of the time, pooled over the seven PolyBench guards. The noise is
//! the committed baselines' recorded rounds; then again with the drift between real check
//! sessions (results/check/acceptance.json) beyond what one session's noise explains, when
//! there is any. Fixed seeds; a small version of `cargo bench --bench decision_rule`
//! (whose figures are in results/check/decision_rule.md).

use std::path::Path;

use moldtune::check::rule::Rule;
use moldtune::check::simulate::{between_sessions, observed_changes, simulate, Source};

const TRIALS: usize = 30;

/// (false alarms, slowdowns caught, mean log-variance of the unchanged estimate), pooled.
fn run(sources: &[Source], rule: &Rule) -> (usize, usize, f64) {
    let (mut alarms, mut caught, mut within) = (0, 0, 0.0);
    for s in sources {
        let same = simulate(s, rule, 1.0, TRIALS, 11);
        let slow = simulate(s, rule, 1.15, TRIALS, 12);
        eprintln!("{}: unchanged {same:?}\n  ×1.15 {slow:?}", s.name);
        alarms += same.regression;
        caught += slow.regression;
        within += same.change_log_var / sources.len() as f64;
    }
    (alarms, caught, within)
}

#[track_caller]
fn assert_rates(alarms: usize, caught: usize, n: usize, what: &str) {
    assert!(alarms * 100 <= n, "{what}: {alarms} false alarms in {n}");
    assert!(
        caught * 100 >= 95 * n,
        "{what}: {caught} of {n} slowdowns caught"
    );
}

#[test]
fn false_alarms_are_rare_and_a_15_percent_slowdown_is_caught() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    let mut sources = Source::of_folder(&dir.join("baselines")).unwrap();
    assert_eq!(sources.len(), 7, "one guard per PolyBench kernel");
    let rule = Rule {
        resamples: 400,
        ..Rule::default()
    };
    let n = TRIALS * sources.len();
    let (alarms, caught, within) = run(&sources, &rule);
    assert_rates(alarms, caught, n, "recorded noise");
    let observed = observed_changes(&dir.join("check/acceptance.json")).unwrap();
    assert!(observed.len() >= 70, "{} changes", observed.len());
    let (seen, drift) = between_sessions(&observed, within);
    eprintln!("observed log-variance {seen:.2e}, one session's {within:.2e}");
    if let Some(drift) = drift {
        sources
            .iter_mut()
            .for_each(|s| s.drift = Some(drift.clone()));
        let (alarms, caught, _) = run(&sources, &rule);
        assert_rates(alarms, caught, n, "with the drift between sessions");
    }
}
