//! `moldtune baseline` and `moldtune check` with the mock evaluator (no compiler): the
//! verdicts and their exit codes, the Markdown and JUnit outputs, and bad baselines.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{assert_code, describe, edit_json, moldtune, text, write_toy, Moldtune};

/// A toy problem tuned (mock) and a baseline written from the run: `b/toy.json`.
fn baseline(dir: &Path) -> PathBuf {
    write_toy(dir);
    let o = moldtune("run")
        .arg("p.yaml")
        .mock()
        .max_evals(12)
        .out("run")
        .quiet()
        .cwd(dir)
        .output();
    assert_code(&o, 0);
    let o = moldtune("baseline")
        .arg("run")
        .out("b")
        .rounds(20)
        .mock()
        .cwd(dir)
        .output();
    assert_code(&o, 0);
    dir.join("b/toy.json")
}

/// `moldtune check BASELINES --mock`.
fn check(baselines: &str) -> Moldtune {
    moldtune("check").arg(baselines).mock()
}

/// `moldtune check --update BASELINES --mock --rounds N`.
fn update(baselines: &str, rounds: u32) -> Moldtune {
    moldtune("check")
        .args(["--update", baselines])
        .mock()
        .rounds(rounds)
}

#[test]
fn an_unchanged_program_passes_and_writes_markdown_and_junit() {
    let tmp = tempfile::tempdir().unwrap();
    let file = baseline(tmp.path());
    let b: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(b["problem"], "../p.yaml", "relative to the baseline");
    assert_eq!(b["reference"]["samples"].as_array().unwrap().len(), 20);
    assert!(
        b["guards"][0]["speedup"]["ratio"].as_f64().unwrap() > 1.0,
        "{b}"
    );
    let reports = ["--markdown", "c.md", "--junit", "c.xml", "--html", "c.html"];
    let o = check("b").args(reports).cwd(tmp.path()).output();
    assert_code(&o, 0);
    let out = text(&o.stdout);
    assert!(
        out.contains("toy  ") && out.contains(" ok "),
        "{}",
        describe(&o)
    );
    let md = std::fs::read_to_string(tmp.path().join("c.md")).unwrap();
    assert!(md.contains("| toy | tuned | ok |"), "{md}");
    let xml = std::fs::read_to_string(tmp.path().join("c.xml")).unwrap();
    assert!(
        xml.contains("<testcase classname=\"moldtune.check.toy\" name=\"tuned\""),
        "{xml}"
    );
    assert!(!xml.contains("<failure"), "{xml}");
    let html = std::fs::read_to_string(tmp.path().join("c.html")).unwrap();
    assert!(
        html.contains("<td>toy</td><td>tuned</td><td class=\"ok\">ok</td>"),
        "{html}"
    );
    assert!(
        !html.contains("<script") && !html.contains("http"),
        "self-contained: {html}"
    );
}

#[test]
fn a_lost_speed_up_is_a_regression_and_a_gained_one_an_improvement() {
    let tmp = tempfile::tempdir().unwrap();
    let file = baseline(tmp.path());
    let scale = |v: &mut serde_json::Value, by: f64| {
        for x in v["guards"][0]["samples"].as_array_mut().unwrap() {
            *x = (x.as_f64().unwrap() * by).into();
        }
    };
    // Recorded 1.5x faster than it now is: the speed-up was lost.
    edit_json(&file, |v| scale(v, 1.0 / 1.5));
    let o = check("b")
        .args(["--junit", "c.xml"])
        .json()
        .cwd(tmp.path())
        .output();
    assert_code(&o, 4);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["guarded"][0]["verdict"], "regression", "{j}");
    assert!(
        j["guarded"][0]["change"]["low"].as_f64().unwrap() > 1.1,
        "{j}"
    );
    let xml = std::fs::read_to_string(tmp.path().join("c.xml")).unwrap();
    assert!(xml.contains("<failure type=\"regression\""), "{xml}");
    // Recorded 2.25x slower than it now is: better than the baseline.
    edit_json(&file, |v| scale(v, 1.5 * 1.5));
    let o = check("b").cwd(tmp.path()).output();
    assert_code(&o, 0);
    assert!(text(&o.stdout).contains("improvement"), "{}", describe(&o));
    // `--update` records the samples again: the gate passes on the new level.
    edit_json(&file, |v| scale(v, 1.0 / 2.25 / 1.5));
    assert_code(&update("b/toy.json", 10).cwd(tmp.path()).output(), 0);
    let o = check("b/toy.json").cwd(tmp.path()).output();
    assert_code(&o, 0);
}

#[test]
fn bad_baselines_are_refused_with_the_file_and_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let file = baseline(tmp.path());
    let good = std::fs::read_to_string(&file).unwrap();
    let refused = |needle: &str| {
        let o = check("b/toy.json").cwd(tmp.path()).output();
        assert_code(&o, 2);
        let err = text(&o.stderr);
        assert!(
            err.contains("b/toy.json") && err.contains(needle),
            "want `{needle}`:\n{}",
            describe(&o)
        );
    };
    std::fs::write(&file, &good[..good.len() / 2]).unwrap();
    refused("b/toy.json:");
    std::fs::write(&file, good.replace("\"tuned\"", "\"tuned\", \"colour\": 1")).unwrap();
    refused("unknown field `colour`");
    std::fs::write(&file, &good).unwrap();
    edit_json(&file, |v| v["guards"][0]["config"]["P0"] = "7".into());
    refused("guards[0] (`tuned`): `P0=7`: `7` is not a value of `P0`");
    std::fs::write(&file, &good).unwrap();
    edit_json(&file, |v| v["guards"][0]["config"]["PX"] = "1".into());
    refused("there is no parameter `PX`");
    std::fs::write(&file, &good).unwrap();
    edit_json(&file, |v| {
        v["reference"]["config"]
            .as_object_mut()
            .unwrap()
            .remove("P1")
            .map(drop)
            .unwrap()
    });
    refused("reference (`default`): no value for the parameter `P1`");
    std::fs::write(&file, &good).unwrap();
    edit_json(&file, |v| v["guards"] = serde_json::json!([]));
    refused("`guards` is empty");
    std::fs::write(&file, &good).unwrap();
    edit_json(&file, |v| v["metric"] = "instructions (minimize)".into());
    refused("its samples are of `instructions (minimize)`, but its problem's metric is `kernel_time (minimize)`");
    // `--update` records the problem's metric, and the check accepts it again.
    assert_code(&update("b/toy.json", 5).cwd(tmp.path()).output(), 0);
    let o = check("b/toy.json").cwd(tmp.path()).output();
    assert_code(&o, 0);
    std::fs::write(&file, &good).unwrap();
    std::fs::remove_file(tmp.path().join("p.yaml")).unwrap();
    refused("p.yaml` does not exist");
    a_missing_baseline_and_a_bad_threshold_are_refused(tmp.path());
}

/// A baseline file that does not exist, a threshold past 100%: refused.
fn a_missing_baseline_and_a_bad_threshold_are_refused(dir: &Path) {
    let o = moldtune("check")
        .args(["nowhere.json", "--threshold", "10%"])
        .cwd(dir)
        .output();
    assert_code(&o, 2);
    let o = moldtune("check")
        .args(["b", "--threshold", "150%"])
        .cwd(dir)
        .output();
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("between 0% and 100%"),
        "{}",
        describe(&o)
    );
}

#[test]
fn recordings_on_other_cpus_are_kept_and_the_one_of_this_cpu_is_used() {
    let tmp = tempfile::tempdir().unwrap();
    let file = baseline(tmp.path());
    let read = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap()
    };
    let here = read()["recorded"]["cpu"].clone();
    let good = read();
    // A recording from another CPU is kept under `elsewhere` when this one re-records.
    edit_json(&file, |v| v["recorded"]["cpu"] = "Another CPU".into());
    assert_code(&update("b", 10).cwd(tmp.path()).output(), 0);
    let v = read();
    assert_eq!(v["recorded"]["cpu"], here);
    assert_eq!(v["elsewhere"][0]["recorded"]["cpu"], "Another CPU", "{v}");
    assert_eq!(v["elsewhere"][0]["reference"], good["reference"]["samples"]);
    // The current recording made elsewhere (and lost speed-up there), this CPU's under
    // `elsewhere`: the check compares with this CPU's.
    edit_json(&file, |v| {
        *v = good.clone();
        v["elsewhere"] = serde_json::json!([{
            "recorded": good["recorded"],
            "reference": good["reference"]["samples"],
            "guards": [good["guards"][0]["samples"]],
        }]);
        v["recorded"]["cpu"] = "A third CPU".into();
        for x in v["guards"][0]["samples"].as_array_mut().unwrap() {
            *x = (x.as_f64().unwrap() / 1.5).into();
        }
    });
    let check_b = || check("b").cwd(tmp.path());
    let o = check_b().output();
    assert_code(&o, 0);
    assert!(
        text(&o.stderr).contains("toy: compared with its recording on this CPU"),
        "{}",
        describe(&o)
    );
    edit_json(&file, |v| {
        v["elsewhere"][0]["recorded"]["cpu"] = "Not this one".into()
    });
    assert_code(&check_b().output(), 4);
    edit_json(&file, |v| {
        v["elsewhere"][0]["guards"] = serde_json::json!([])
    });
    let o = check_b().output();
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("`elsewhere[0]` holds samples for 0 guards, not 1"),
        "{}",
        describe(&o)
    );
}

/// `moldtune` in `cwd` on a mock machine whose re-measurements vary by `noise` (relative
/// width of a uniform noise; the mock's default is 0.04).
fn noisy(noise: &str, c: Moldtune, cwd: &Path) -> Output {
    c.cwd(cwd).env("MOLDTUNE_MOCK_NOISE", noise).output()
}

/// `moldtune baseline run --out OUT --rounds 20 --mock`.
fn record(out: &str) -> Moldtune {
    moldtune("baseline").arg("run").out(out).rounds(20).mock()
}

#[test]
fn a_recording_too_noisy_for_the_threshold_grows_then_warns_or_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let quiet = baseline(tmp.path());
    let q: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&quiet).unwrap()).unwrap();
    // Quiet: the rounds asked for resolve the threshold; nothing more is recorded.
    assert_eq!(q["recorded"]["rounds"], 20, "{q}");
    assert_eq!(q["recorded"]["threshold"], 0.1, "{q}");
    assert!(
        q["guards"][0]["resolution"].as_f64().unwrap() <= 0.05,
        "{q}"
    );

    let o = noisy("1.6", record("n"), tmp.path());
    assert_code(&o, 0);
    let err = text(&o.stderr);
    assert!(
        err.contains("cannot decide a 10% threshold") && err.contains("hint: "),
        "{err}"
    );
    let n: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("n/toy.json")).unwrap())
            .unwrap();
    // It kept recording up to its cap (4× the rounds asked for) before it gave up.
    assert_eq!(n["recorded"]["rounds"], 80, "{n}");
    assert_eq!(n["reference"]["samples"].as_array().unwrap().len(), 80);
    assert!(n["guards"][0]["resolution"].as_f64().unwrap() > 0.05, "{n}");

    // --strict refuses it and leaves the file as it was.
    let before = std::fs::read_to_string(&quiet).unwrap();
    let o = noisy("1.6", record("b").arg("--strict"), tmp.path());
    assert_code(&o, 7);
    assert!(
        text(&o.stderr).contains("left as it was"),
        "{}",
        describe(&o)
    );
    assert_eq!(std::fs::read_to_string(&quiet).unwrap(), before);
    let strict = update("b/toy.json", 20).arg("--strict");
    assert_code(&noisy("1.6", strict, tmp.path()), 7);
    assert_eq!(std::fs::read_to_string(&quiet).unwrap(), before);
}

#[test]
fn an_undecided_check_names_the_noisy_side_and_undecided_pass_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    baseline(tmp.path());
    assert_code(&noisy("1.6", record("n"), tmp.path()), 0);
    // A quiet session against the noisy recording: the recording is to blame.
    let check_n = || {
        check("n")
            .args(["--max-rounds", "60"])
            .args(["--markdown", "c.md", "--junit", "c.xml"])
            .cwd(tmp.path())
    };
    let o = check_n().output();
    assert_code(&o, 7);
    let err = text(&o.stderr);
    assert!(
        err.contains("expect undecided checks"),
        "warned before measuring: {err}"
    );
    let md = std::fs::read_to_string(tmp.path().join("c.md")).unwrap();
    assert!(md.contains("the recording is too noisy"), "{md}");
    assert!(md.contains("moldtune check --update"), "{md}");
    let xml = std::fs::read_to_string(tmp.path().join("c.xml")).unwrap();
    assert!(xml.contains("<error type=\"undecided\""), "{xml}");

    let o = check_n().args(["--undecided", "pass"]).output();
    assert_code(&o, 0);
    assert!(text(&o.stdout).contains("undecided"), "{}", describe(&o));
    let xml = std::fs::read_to_string(tmp.path().join("c.xml")).unwrap();
    assert!(
        !xml.contains("<error") && !xml.contains("<failure"),
        "{xml}"
    );
    let md = std::fs::read_to_string(tmp.path().join("c.md")).unwrap();
    assert!(md.contains("undecided (passed: --undecided pass)"), "{md}");
}

/// Report paths are checked before anything is measured: a missing folder or a baseline as
/// `--markdown` is refused (exit 2, the baseline intact); a report that fails to be written
/// after the measurement keeps the verdict's exit code and the table.
#[test]
fn report_paths_are_checked_first_and_a_failed_report_keeps_the_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let file = baseline(tmp.path());
    let before = std::fs::read_to_string(&file).unwrap();
    let check_b = || check("b").cwd(tmp.path());
    let o = check_b().args(["--markdown", "b/toy.json"]).output();
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("is a baseline this check reads"),
        "{}",
        describe(&o)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    let o = check_b().args(["--html", "no/such/folder/c.html"]).output();
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("does not exist"),
        "{}",
        describe(&o)
    );
    assert!(
        text(&o.stdout).is_empty(),
        "nothing measured: {}",
        describe(&o)
    );
    let o = check_b().args(["--junit", "/dev/full"]).output();
    assert_code(&o, 0);
    assert!(text(&o.stdout).contains("tuned"), "{}", describe(&o));
    assert!(
        text(&o.stderr).contains("`--junit` was not written"),
        "{}",
        describe(&o)
    );
    // No run to resume (issue 42 item 8: it hinted `moldtune run --resume`).
    assert!(!text(&o.stderr).contains("--resume"), "{}", describe(&o));
}

/// `check --update` on a baseline reached through a symlink writes the link's target (the
/// link stays a link) and keeps the file's mode.
#[test]
fn update_writes_through_a_symlinked_baseline_keeping_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let file = baseline(tmp.path());
    let kept = tmp.path().join("kept.json");
    std::fs::rename(&file, &kept).unwrap();
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink(&kept, &file).unwrap();
    let before = std::fs::read_to_string(&kept).unwrap();
    let o = update("b/toy.json", 5).cwd(tmp.path()).output();
    assert_code(&o, 0);
    assert!(std::fs::symlink_metadata(&file)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_ne!(std::fs::read_to_string(&kept).unwrap(), before);
    let mode = std::fs::metadata(&kept).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
}

/// Recorded samples that cannot be times, and thresholds that mean nothing, are refused when
/// read (exit 2 naming the file, the key and the value).
#[test]
fn a_baseline_whose_samples_cannot_be_times_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let file = baseline(tmp.path());
    let good = std::fs::read_to_string(&file).unwrap();
    let refused = |edit: &dyn Fn(&mut serde_json::Value), want: &str| {
        std::fs::write(&file, &good).unwrap();
        edit_json(&file, edit);
        let o = check("b").cwd(tmp.path()).output();
        assert_code(&o, 2);
        assert!(
            text(&o.stderr).contains(want),
            "want `{want}`: {}",
            describe(&o)
        );
        assert!(text(&o.stderr).contains("toy.json"), "{}", describe(&o));
    };
    refused(
        &|v| v["reference"]["samples"][0] = (-2.0).into(),
        "reference.samples[0]",
    );
    refused(
        &|v| {
            let n = v["reference"]["samples"].as_array().unwrap().len();
            v["reference"]["samples"] = serde_json::json!(vec![0.0; n]);
        },
        "reference.samples[0]",
    );
    refused(
        &|v| v["guards"][0]["samples"][1] = (-1.0).into(),
        "guards[0].samples[1]",
    );
    for bad in [-0.1, 0.0, 1e308] {
        refused(
            &|v| v["recorded"]["threshold"] = bad.into(),
            "recorded.threshold",
        );
    }
}

/// The Slurm executor's flags: `check` itself times here (refused), `--update` records on a
/// cluster only with `--executor slurm` (its settings alone are refused), and nothing is
/// written either way.
#[test]
fn the_executor_flags_of_check_are_refused_where_they_cannot_act() {
    let tmp = tempfile::tempdir().unwrap();
    let b = baseline(tmp.path());
    let before = std::fs::read(&b).unwrap();
    let file = b.to_str().unwrap();
    for (args, says) in [
        (
            vec![file, "--executor", "slurm"],
            "only `--update` records on a cluster",
        ),
        (
            vec!["--update", file, "--workers", "2"],
            "`--workers` is a setting of the Slurm executor",
        ),
    ] {
        let o = moldtune("check").args(args).mock().cwd(tmp.path()).output();
        assert_code(&o, 2);
        assert!(
            crate::common::text(&o.stderr).contains(says),
            "{}",
            describe(&o)
        );
        assert_eq!(std::fs::read(&b).unwrap(), before);
    }
}

/// The toy problem with `metric` (goal and kind) tuned and a baseline written, the mock's
/// values lowered by `shift` (and their noise `noise` wide, the mock's 4% by default):
/// `b/toy.json`.
fn baseline_of(dir: &Path, metric: &str, shift: &str, noise: Option<&str>) -> PathBuf {
    write_toy(dir);
    let yaml = format!("{}metric: {metric}\n", crate::common::TOY_YAML);
    std::fs::write(dir.join("p.yaml"), yaml).unwrap();
    let run = moldtune("run")
        .arg("p.yaml")
        .mock()
        .max_evals(12)
        .out("run");
    for c in [run, record("b")] {
        let c = match noise {
            Some(n) => c.env("MOLDTUNE_MOCK_NOISE", n),
            None => c,
        };
        let o = with_shift(c, dir, shift);
        assert_code(&o, 0);
    }
    dir.join("b/toy.json")
}

fn with_shift(c: Moldtune, dir: &Path, shift: &str) -> Output {
    c.cwd(dir).env("MOLDTUNE_MOCK_SHIFT", shift).output()
}

/// Multiplies the guard's recorded samples by `by`.
fn scale_guard(file: &Path, by: f64) {
    edit_json(file, |v| {
        for x in v["guards"][0]["samples"].as_array_mut().unwrap() {
            *x = (x.as_f64().unwrap() * by).into();
        }
    });
}

/// A throughput (maximised, positive): the baseline records the tuned configuration's gain
/// as a ratio above 1; a drop since the recording is a regression (exit 4), a rise passes.
#[test]
fn a_maximised_metric_s_drop_is_a_regression_and_its_rise_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let file = baseline_of(tmp.path(), "{kind: wall_time, goal: maximize}", "0", None);
    let b: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let gain = b["guards"][0]["speedup"]["ratio"].as_f64().unwrap();
    assert!(gain > 1.0, "the tuned configuration's gain: {b}");
    // Recorded 1.5x higher than it now measures: a drop.
    scale_guard(&file, 1.5);
    let o = with_shift(check("b").json(), tmp.path(), "0");
    assert_code(&o, 4);
    // Recorded 1.5x lower than it now measures: a rise.
    scale_guard(&file, 1.0 / 1.5 / 1.5);
    let o = with_shift(check("b"), tmp.path(), "0");
    assert_code(&o, 0);
    assert!(text(&o.stdout).contains("improvement"), "{}", describe(&o));
}

/// A score of negative values, maximised: the baseline records them (it refused negative
/// samples), states the gain as a difference, and a drop of the score is a regression.
#[test]
fn a_negative_score_is_recorded_and_its_drop_is_a_regression() {
    let tmp = tempfile::tempdir().unwrap();
    let metric = "{kind: regex, regex: 'score: (\\S+)', goal: maximize}";
    let file = baseline_of(tmp.path(), metric, "5", None);
    let b: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(b["reference"]["samples"][0].as_f64().unwrap() < 0.0, "{b}");
    let gain = &b["guards"][0]["speedup"];
    assert!(gain["difference"].as_f64().unwrap() > 0.0, "{b}");
    let o = with_shift(check("b"), tmp.path(), "5");
    assert_code(&o, 0);
    let said = text(&o.stderr);
    assert!(
        said.contains("higher than the reference"),
        "{}",
        describe(&o)
    );
    // Negative samples grow more negative when scaled up: recorded ×0.5 is a higher score
    // then, so now is a drop.
    scale_guard(&file, 0.5);
    let o = with_shift(check("b"), tmp.path(), "5");
    assert_code(&o, 4);
}

/// A report may not replace what the check reads: the problem file or the mold (refused
/// before anything is measured, both left as they were), nor another report's file, even
/// one not written yet.
#[test]
fn a_report_path_naming_the_problem_the_mold_or_another_report_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    baseline(tmp.path());
    let before = std::fs::read_to_string(tmp.path().join("p.yaml")).unwrap();
    let mold = std::fs::read_to_string(tmp.path().join("m.c")).unwrap();
    // Each named for what it is (the problem file and the mold were called "a baseline").
    for (args, says) in [
        (
            &["--markdown", "p.yaml"][..],
            "is a problem file or mold of a baseline",
        ),
        (
            &["--html", "m.c"][..],
            "is a problem file or mold of a baseline",
        ),
        (
            &["--html", "b/toy.json"][..],
            "is a baseline this check reads",
        ),
        (
            &["--markdown", "new.md", "--html", "./new.md"][..],
            "another report's file",
        ),
    ] {
        let o = check("b").args(args).cwd(tmp.path()).output();
        assert_code(&o, 2);
        let err = text(&o.stderr);
        assert!(
            err.contains("nothing was measured") && err.contains(says),
            "{}",
            describe(&o)
        );
    }
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("p.yaml")).unwrap(),
        before
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("m.c")).unwrap(),
        mold
    );
    assert!(!tmp.path().join("new.md").exists());
}

/// `check` on the toy's baseline of `metric`, the mock's values lowered by `shift` and free
/// of noise (a deterministic score): its JSON and exit code.
fn check_score(dir: &Path, shift: &str, flags: &[&str]) -> (serde_json::Value, Option<i32>) {
    let c = check("b")
        .json()
        .args(flags)
        .env("MOLDTUNE_MOCK_NOISE", "0");
    let o = with_shift(c, dir, shift);
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", describe(&o)));
    (v, o.status.code())
}

/// A score is judged by its own value against the recorded one (issue 54's cases, on the
/// mock: every value moved by `MOLDTUNE_MOCK_SHIFT`): a change that lifts every
/// configuration passes, a drop beyond `--tolerance` fails although the lead over the
/// reference is unchanged, a negative score that falls fails; a deterministic score decides
/// after 3 rounds instead of 20.
#[test]
fn a_score_is_judged_by_its_own_value_and_decides_at_once_when_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let metric = "{kind: regex, regex: 'score: (\\S+)', goal: maximize}";
    baseline_of(d, metric, "0", Some("0"));
    let guard = |v: &serde_json::Value| v["guarded"][0].clone();
    // Every configuration lifted by 0.5.
    let (v, code) = check_score(d, "-0.5", &["--tolerance", "0.01"]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(guard(&v)["verdict"], "improvement", "{v}");
    assert_eq!(
        guard(&v)["rounds"],
        3,
        "a deterministic score decides at once: {v}"
    );
    assert!(
        guard(&v)["change"].is_null(),
        "judged by value, not by lead: {v}"
    );
    // Every configuration lowered by 0.04: the lead is the same, the score is not.
    let (v, code) = check_score(d, "0.04", &["--tolerance", "0.01"]);
    assert_eq!(code, Some(4), "{v}");
    let loss = guard(&v)["drift"]["loss"]["ratio"].as_f64().unwrap();
    assert!((loss - 0.04).abs() < 1e-9, "{v}");
    let (v, code) = check_score(d, "0.04", &["--tolerance", "0.05"]);
    assert_eq!(code, Some(0), "{v}");
    // Judged by lead, as before: the uniform drop leaves the lead as it was.
    let (v, code) = check_score(d, "0.04", &["--judge", "lead"]);
    assert_eq!(code, Some(0), "{v}");
    // A score below zero that falls (a log-likelihood): fails at the default tolerance,
    // 10% of the recorded value's size.
    let (v, code) = check_score(d, "1000", &[]);
    assert_eq!(code, Some(4), "{v}");
}

/// A `TMPDIR` that cannot be used is named and is the user's to fix (exit 2), as mctree
/// says it; `check` exited 1, an internal error.
#[test]
fn an_unusable_tmpdir_is_named_by_check() {
    let tmp = tempfile::tempdir().unwrap();
    baseline(tmp.path());
    let o = check("b")
        .cwd(tmp.path())
        .env("TMPDIR", "/nonexistent/moldtune-tmp")
        .output();
    assert_code(&o, 2);
    let err = text(&o.stderr);
    assert!(
        err.contains("`TMPDIR`") && err.contains("/nonexistent/moldtune-tmp"),
        "{err}"
    );
}

/// A baseline of a million samples (no recording makes one: it gave no verdict in 300 s) is
/// refused at once, naming the configuration and the bound.
#[test]
fn a_baseline_with_more_samples_than_a_recording_makes_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let file = baseline(tmp.path());
    edit_json(&file, |v| {
        v["guards"][0]["samples"] = vec![1.0; 1_000_000].into()
    });
    let o = check("b").cwd(tmp.path()).output();
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("holds 1000000 samples: more than the 10000"),
        "{}",
        describe(&o)
    );
}
