//! The PolyBench case studies: every problem file loads and runs (mock), every mold's default
//! configuration matches its plain kernel (real clang-22, fast datasets), and the output check
//! catches a deliberately illegal variant.

use crate::common::{moldtune, KERNELS};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn problems() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = KERNELS
        .iter()
        .map(|k| root().join(format!("polybench/{k}/{k}.yaml")))
        .collect();
    v.push(root().join("polybench/syr2k/illegal.yaml"));
    v.push(root().join("polybench/floyd-warshall/illegal.yaml"));
    v.push(root().join("polybench/gemm/gemm-table.yaml"));
    v.push(root().join("polybench/gemm/gemm-reach.yaml"));
    v
}

/// The reach mold's register tile, packed panel and parallel row tiles leave rows and columns
/// over at LARGE (1000 rows, 1100 columns): every such shape's output must match gemm.c.
#[test]
fn the_reach_mold_agrees_with_gemm_at_its_edges() {
    require_clang!();
    let shapes = [
        [
            "TJ=64",
            "TK=32",
            "RI=6",
            "RJ=2",
            "PACK=1",
            "PAR=#pragma omp parallel for",
        ],
        ["TJ=1100", "TK=1200", "RI=8", "RJ=1", "PACK=0", "PAR="],
        ["TJ=128", "TK=256", "RI=3", "RJ=3", "PACK=1", "PAR="],
    ];
    for shape in shapes {
        let mut m = moldtune("measure").arg(root().join("polybench/gemm/gemm-reach.yaml"));
        for s in shape {
            m = m.arg("--set").arg(s);
        }
        let o = m.args(["--repeats", "1"]).output();
        assert!(
            o.status.success(),
            "{shape:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn every_problem_file_loads_and_runs_with_the_mock() {
    for p in problems() {
        let tmp = tempfile::tempdir().unwrap();
        let o = moldtune("run")
            .arg(&p)
            .mock()
            .quiet()
            .max_evals(5)
            .out(tmp.path().join("run"))
            .output();
        assert!(
            o.status.success(),
            "{}: {}",
            p.display(),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn mold_defaults_match_the_plain_kernels() {
    require_clang!();
    let o = Command::new("bash")
        .arg(root().join("polybench/check_all.sh"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "check_all.sh failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn tiled_floyd_warshall_on_random_weights_is_wrong_output() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = moldtune("run")
        .arg(root().join("polybench/floyd-warshall/illegal.yaml"))
        .quiet()
        .max_evals(1)
        .args(["--repeats", "1"])
        .out(&out)
        .output();
    // The only evaluation (the default: a 3-D tiling) is wrong, so no variant succeeded.
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let row = csv.lines().nth(1).expect("one row");
    assert!(row.contains(",wrong_output,"), "{row}");
}
