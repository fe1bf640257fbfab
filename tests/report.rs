//! `moldtune report` and `curve.svg`: the page and the summary written over committed run
//! directories (no compiler needed: mctree's keep what discovery found in `mctree.json`),
//! bad input refused with exit 2, and
//! `moldtune run` (mock) leaving `curve.svg` in its run directory.

use crate::common::*;

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A committed run directory.
fn committed(rel: &str) -> PathBuf {
    root().join(rel)
}

/// `moldtune report DIRS --out OUT`.
fn report(dirs: &[PathBuf], out: &Path) -> std::process::Output {
    moldtune("report").args(dirs).out(out).output()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The one file in `dir` whose name ends with `suffix`, by the order `report` numbers them.
fn figure(dir: &Path, prefix: &str, suffix: &str) -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{prefix}*{suffix} in {}: {found:?}",
        dir.display()
    );
    found.remove(0)
}

/// How many rows of results.csv in `dir` have `status`.
fn count_status(dir: &Path, status: &str) -> usize {
    let csv = Csv::read(dir);
    let col = csv.header.iter().position(|h| h == "status").unwrap();
    csv.rows.iter().filter(|r| r[col] == status).count()
}

/// The rows of the page's comparison table.
fn comparison_rows(html: &str) -> usize {
    let table = html
        .split("<table class=\"comparison\">")
        .nth(1)
        .expect("a comparison table");
    let body = table.split("<tbody>").nth(1).expect("a table body");
    let body = body.split("</tbody>").next().unwrap();
    body.matches("<tr>").count()
}

#[test]
fn one_run_gives_a_self_contained_page_a_summary_and_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("rep");
    let o = report(&[committed("results/paper/gemm/large")], &out);
    assert_code(&o, 0);
    let stdout = text(&o.stdout);
    assert!(
        stdout.contains("report.html") && stdout.contains("report.md"),
        "{stdout}"
    );

    let html = read(&out.join("report.html"));
    assert!(html.starts_with("<!DOCTYPE html>"));
    // The convergence plot and the importance bars, inline.
    assert_eq!(html.matches("<svg").count(), 2, "inline figures");
    assert_eq!(comparison_rows(&html), 1);
    for needle in [
        "Parameter importance",
        "53 of 60 evaluations used",
        "What tuning changed",
        "+++ best.c",
        "run_timeout",
        "the speed-up is the search&#39;s own numbers",
    ] {
        assert!(html.contains(needle), "the page lacks `{needle}`");
    }
    // Self-contained: nothing fetched, no script.
    for banned in ["<script", "src=\"http", "href=\"http", "<link", "@import"] {
        assert!(!html.contains(banned), "the page holds `{banned}`");
    }

    let md = read(&out.join("report.md"));
    assert!(md.contains("| 1 | gemm | rf | 1 |"), "{md}");
    let curve = figure(&out, "1-", "-curve.svg");
    let bars = figure(&out, "1-", "-importance.svg");
    for f in [&curve, &bars] {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            md.contains(&format!("]({name})")),
            "the summary does not show {name}"
        );
        assert!(read(f).starts_with("<svg"));
    }
    assert!(md.contains("```diff"));
}

#[test]
fn the_curve_has_the_best_so_far_line_and_one_marker_per_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let run = committed("results/paper/gemm/large");
    assert_code(&report(std::slice::from_ref(&run), tmp.path()), 0);
    let svg = read(&figure(tmp.path(), "1-", "-curve.svg"));
    assert!(svg.contains("best so far"));
    // The step line: a 2-px black polyline through several points.
    let steps = svg
        .lines()
        .filter(|l| l.contains("<polyline") && l.contains("stroke=\"#000000\" stroke-width=\"2\""))
        .map(|l| l.matches(',').count())
        .max()
        .unwrap_or(0);
    assert!(steps >= 4, "no best-so-far line");
    // run_timeout markers are green squares: one per failed evaluation, one in the legend.
    let timeouts = count_status(&run, "run_timeout");
    assert!(timeouts > 0);
    assert_eq!(svg.matches("fill=\"#009E73\"").count(), timeouts + 1);
    assert!(svg.contains("run_timeout") && svg.contains("build_timeout"));
    assert!(svg.contains("default (eval 0)"));
    assert!(svg.contains("kernel time (s)"));

    // A run without failures has no failure band.
    let clean = committed("results/paper/gemm/medium");
    assert_eq!(count_status(&clean, "ok"), Csv::read(&clean).rows.len());
    assert_code(&report(&[clean], &tmp.path().join("clean")), 0);
    let svg = read(&figure(&tmp.path().join("clean"), "1-", "-curve.svg"));
    assert!(!svg.contains("run_timeout") && !svg.contains("#009E73"));
}

#[test]
fn many_runs_give_one_row_each() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = [
        committed("results/paper/gemm/large"),
        committed("results/paper/gemm/medium"),
        committed("results/paper/floyd-warshall/medium"),
    ];
    assert_code(&report(&dirs, tmp.path()), 0);
    let html = read(&tmp.path().join("report.html"));
    assert_eq!(comparison_rows(&html), 3);
    assert_eq!(html.matches("<section class=\"run\"").count(), 3);
    let md = read(&tmp.path().join("report.md"));
    for (k, name) in [
        (1, "gemm"),
        (2, "gemm-medium"),
        (3, "floyd-warshall-medium"),
    ] {
        assert!(
            md.contains(&format!("| {k} | {name} | rf |")),
            "row {k}: {md}"
        );
    }
    assert!(md.contains("wrong_output 19"), "outcome counts");
    for k in 1..=3 {
        figure(tmp.path(), &format!("{k}-"), "-curve.svg");
    }
}

#[test]
fn without_out_one_run_reports_into_its_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    for f in ["results.csv", "results.json", "run.json", "best.c"] {
        std::fs::copy(committed("results/paper/gemm/medium").join(f), run.join(f)).unwrap();
    }
    // run.json names the problem relative to the run directory: point it at the repository's.
    let mut meta = read_json(&run.join("run.json"));
    meta["problem"] = root()
        .join("polybench/gemm/gemm.medium.yaml")
        .display()
        .to_string()
        .into();
    std::fs::write(run.join("run.json"), meta.to_string()).unwrap();
    let o = moldtune("report").arg(&run).output();
    assert_code(&o, 0);
    assert!(run.join("report/report.html").is_file());
    assert!(run.join("report/report.md").is_file());
}

#[test]
fn an_mctree_run_shows_its_verified_speedup_and_no_ranking() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let run = committed("results/mctree/runs/floyd-warshall/rf-s0");
    assert_code(&report(&[run], tmp.path()), 0);
    let html = read(&tmp.path().join("report.html"));
    assert!(html.contains("mctree rf"));
    // The verification in run.json: 2.26x with its interval.
    assert!(
        html.contains("2.26x faster") && html.contains("[2.22–2.33]"),
        "verified speed-up"
    );
    // Importance withheld (out-of-bag R² below 0.1): said, not drawn.
    assert!(html.contains("No ranking: the forest"));
    assert_eq!(html.matches("<svg").count(), 1, "only the convergence plot");
    assert!(
        html.contains("#pragma omp tile"),
        "the diff shows the directives"
    );
    let md = read(&tmp.path().join("report.md"));
    assert!(md.contains("No ranking"));
}

#[test]
fn a_directory_that_is_not_a_run_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = tmp.path().join("rep");
    let o = report(
        &[committed("results/paper/gemm/medium"), empty.clone()],
        &out,
    );
    assert_code(&o, 2);
    let err = text(&o.stderr);
    assert!(err.contains(&format!("`{}`", empty.display())), "{err}");
    assert!(err.contains("not a moldtune run directory"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists(), "nothing is written for bad input");

    let broken = tmp.path().join("broken");
    std::fs::create_dir(&broken).unwrap();
    std::fs::write(broken.join("run.json"), "{ not json").unwrap();
    let o = report(std::slice::from_ref(&broken), &out);
    assert_code(&o, 2);
    let err = text(&o.stderr);
    assert!(
        err.contains(&broken.display().to_string()) && err.contains("run.json"),
        "{err}"
    );

    // No directory at all is clap's usage error.
    assert_code(&moldtune("report").output(), 2);
}

/// A mold whose parameter values are HTML: the page must show them as text.
const HTML_YAML: &str = r#"name: tags
mold: m.c
params:
  - name: P0
    type: ordinal
    values: [1, 2, 4, 8, 16, 32]
    default: 4
  - name: TAG
    type: categorical
    choices: ["<b>", "a&b", "</pre><script>x</script>"]
    default: "<b>"
compile: "cc {{ source }} -o {{ exe }}"
run: "{{ exe }}"
"#;

const HTML_MOLD: &str = "int p0 = #P0;\n/* #TAG */\n";

/// `moldtune run` of the HTML problem (mock), in a fresh directory; returns it and the run.
fn mock_run(evals: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("p.yaml"), HTML_YAML).unwrap();
    std::fs::write(tmp.path().join("m.c"), HTML_MOLD).unwrap();
    let out = tmp.path().join("run");
    let o = moldtune("run")
        .arg("p.yaml")
        .mock()
        .quiet()
        .seed(3)
        .max_evals(evals)
        .out(&out)
        .env_remove("MOLDTUNE_MOCK_DELAY_MS")
        .cwd(tmp.path())
        .output();
    assert_code(&o, 0);
    (tmp, out)
}

#[test]
fn best_verify_draws_the_curve_again() {
    let (_tmp, run) = mock_run("6");
    std::fs::remove_file(run.join("curve.svg")).unwrap();
    let o = moldtune("best")
        .arg(&run)
        .arg("--verify")
        .rounds(3)
        .output();
    assert_code(&o, 0);
    assert!(
        read(&run.join("curve.svg")).contains("verified"),
        "the ring marks the verified best"
    );
}

#[test]
fn moldtune_run_leaves_curve_svg_and_resume_redraws_it() {
    let (_tmp, run) = mock_run("6");
    let first = read(&run.join("curve.svg"));
    assert!(first.starts_with("<svg") && first.contains("tags — gp, seed 3"));
    let o = moldtune("run")
        .arg("--resume")
        .arg(&run)
        .max_evals(9)
        .quiet()
        .output();
    assert_code(&o, 0);
    let second = read(&run.join("curve.svg"));
    let oks = count_status(&run, "ok");
    assert!(
        second.contains(&format!("ok ({oks})")),
        "the legend counts the 9 evaluations"
    );
    assert_ne!(first, second);
}

#[test]
fn a_curve_that_cannot_be_written_is_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("p.yaml"), HTML_YAML).unwrap();
    std::fs::write(tmp.path().join("m.c"), HTML_MOLD).unwrap();
    let out = tmp.path().join("run");
    // A non-empty directory where curve.svg goes: the rename onto it fails.
    std::fs::create_dir_all(out.join("curve.svg/x")).unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .mock()
        .quiet()
        .max_evals(4)
        .out(&out)
        .cwd(tmp.path())
        .output();
    assert_code(&o, 0);
    assert!(
        text(&o.stderr).contains("warning: cannot draw"),
        "{}",
        describe(&o)
    );
    assert!(out.join("results.csv").is_file());
}

#[test]
fn the_page_escapes_what_the_run_holds() {
    let (tmp, run) = mock_run("12");
    let out = tmp.path().join("rep");
    assert_code(&report(&[run], &out), 0);
    let html = read(&out.join("report.html"));
    assert!(!html.contains("<script"), "a parameter value became markup");
    assert!(!html.contains("/* <b> */"));
    assert!(
        html.contains("&lt;b&gt;") || html.contains("a&amp;b") || html.contains("&lt;/pre&gt;")
    );
    // The summary is Markdown: no HTML escaping there.
    let md = read(&out.join("report.md"));
    assert!(!md.contains("&lt;"), "{md}");
}

#[test]
fn mctree_leaves_curve_svg() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = moldtune("mctree")
        .arg(root().join("polybench/gemm/gemm.c"))
        .mock()
        .quiet()
        .max_evals(5)
        .args(["--verify", "0"])
        .out(&out)
        .args(["--", "-DMINI_DATASET"])
        .output();
    assert_code(&o, 0);
    let svg = read(&out.join("curve.svg"));
    assert!(svg.contains("mctree"), "the title names the tree search");
}

#[test]
fn an_interrupted_run_leaves_curve_svg() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("p.yaml"), HTML_YAML).unwrap();
    std::fs::write(tmp.path().join("m.c"), HTML_MOLD).unwrap();
    let out = tmp.path().join("run");
    let mut child = moldtune("run")
        .arg("p.yaml")
        .mock()
        .quiet()
        .max_evals(40)
        .out(&out)
        .env("MOLDTUNE_MOCK_DELAY_MS", "50")
        .cwd(tmp.path())
        .command()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let rows = || std::fs::read_to_string(out.join("results.csv")).map_or(0, |s| s.lines().count());
    let t0 = std::time::Instant::now();
    while rows() < 4 && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(rows() < 41, "the run was not interrupted");
    let svg = read(&out.join("curve.svg"));
    assert!(svg.starts_with("<svg") && svg.contains("best so far"));
}

/// Every committed run directory under results/ — mctree's included, which keep what
/// discovery found in `mctree.json` — is read by `moldtune report` with no compiler on PATH.
#[test]
fn every_committed_run_is_reported_without_a_compiler() {
    let mut dirs = vec![];
    let mut stack = vec![root().join("results")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "run.json") {
                dirs.push(d.clone());
            }
        }
    }
    dirs.sort();
    assert!(dirs.len() >= 100, "{} run directories", dirs.len());
    let tmp = tempfile::tempdir().unwrap();
    let o = moldtune("report")
        .args(&dirs)
        .out(tmp.path())
        .env("PATH", "/nonexistent")
        .output();
    assert_code(&o, 0);
    let curves = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with("-curve.svg"))
        .count();
    assert_eq!(curves, dirs.len());
}
