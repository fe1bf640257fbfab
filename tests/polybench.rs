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

/// The reach mold's register tiles, blocks and packed panels leave rows and columns over at
/// LARGE (1000 rows, 1100 columns): every such shape's output must match gemm.c.
#[test]
fn the_reach_mold_agrees_with_gemm_at_its_edges() {
    require_clang!();
    // Every choice on both sides, with leftover rows and columns (NI 1000, NJ 1100 are not
    // multiples of the tiles), a row block that is not a multiple of RI, in parallel or not.
    let par = "PAR=#pragma omp parallel for";
    let shapes = [
        "TJ=64 TK=32 TI=48 RI=5 RJ=2 PACKA=1 PACKB=2 VEC=1 ORDER=1",
        "TJ=1100 TK=1200 TI=1000 RI=8 RJ=1 PACKA=0 PACKB=0 VEC=0 ORDER=0 PAR=",
        "TJ=128 TK=256 TI=24 RI=3 RJ=3 PACKA=1 PACKB=1 VEC=0 ORDER=0 WIDTH=-mprefer-vector-width=512",
        "TJ=256 TK=384 TI=192 RI=14 RJ=2 PACKA=0 PACKB=2 VEC=1 ORDER=1 PAR=",
    ];
    for (n, shape) in shapes.iter().enumerate() {
        let mut shape: Vec<&str> = shape.split(' ').collect();
        if n % 2 == 0 {
            shape.push(par);
        }
        let mut m = moldtune("measure").arg(root().join("polybench/gemm/gemm-reach.yaml"));
        for s in &shape {
            m = m.arg("--set").arg(s);
        }
        // The file's 30 s run timeout is a tuning run's; a loaded runner took longer than
        // that for a slow shape, which is not what this test is about.
        let o = m.args(["--repeats", "1", "--run-timeout", "1200"]).output();
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
