//! The check's decision rule on simulated measurements with this machine's noise (the
//! committed baselines' recorded rounds, and the drift between real check sessions in
//! results/check/acceptance.json), no compiler: unchanged code raises no more than
//! 1% false alarms and a 15% slowdown is caught at least 95% of the time, pooled over the
//! seven PolyBench guards. Fixed seeds; a small version of `cargo bench --bench
//! decision_rule` (whose figures are in results/check/decision_rule.md).

use std::path::Path;

use moldtune::check::rule::Rule;
use moldtune::check::simulate::{session_drift, simulate, Source};

#[test]
fn false_alarms_are_rare_and_a_15_percent_slowdown_is_caught() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    let mut sources = Source::of_folder(&dir.join("baselines")).unwrap();
    assert_eq!(sources.len(), 7, "one guard per PolyBench kernel");
    // The harsher case: each session's ratio also drifts as real sessions' did.
    let (drift, n) = session_drift(&dir.join("check/acceptance.json")).unwrap();
    assert!(n >= 70, "{n} changes");
    sources
        .iter_mut()
        .for_each(|s| s.drift = Some(drift.clone()));
    let rule = Rule {
        resamples: 400,
        ..Rule::default()
    };
    let trials = 30;
    let (mut alarms, mut caught) = (0, 0);
    for s in &sources {
        let same = simulate(s, &rule, 1.0, trials, 11);
        let slow = simulate(s, &rule, 1.15, trials, 12);
        eprintln!("{}: unchanged {same:?}\n  ×1.15 {slow:?}", s.name);
        alarms += same.regression;
        caught += slow.regression;
    }
    let n = trials * sources.len();
    assert!(alarms * 100 <= n, "{alarms} false alarms in {n}");
    assert!(caught * 100 >= 95 * n, "{caught} of {n} slowdowns caught");
}
