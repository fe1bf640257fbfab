//! Helpers shared by the integration tests: process output, results.csv and JSON readers.
#![allow(dead_code)]

use std::path::Path;

pub mod fake;

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub fn describe(o: &std::process::Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    )
}

#[track_caller]
pub fn assert_code(o: &std::process::Output, code: i32) {
    assert_eq!(o.status.code(), Some(code), "{}", describe(o));
}

/// results.csv as (header, rows). Panics on a malformed file.
pub struct Csv {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Csv {
    pub fn read(dir: &Path) -> Csv {
        let path = dir.join("results.csv");
        let mut rd = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_path(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let header: Vec<String> = rd.headers().unwrap().iter().map(str::to_string).collect();
        let rows: Vec<Vec<String>> = rd
            .records()
            .map(|r| {
                r.unwrap_or_else(|e| panic!("{}: malformed row: {e}", path.display()))
                    .iter()
                    .map(str::to_string)
                    .collect()
            })
            .collect();
        Csv { header, rows }
    }
    /// The number of complete rows in `dir/results.csv` so far (0 when there is none).
    pub fn try_rows(dir: &Path) -> usize {
        std::fs::read(dir.join("results.csv")).map_or(0, |b| {
            b.iter().filter(|&&c| c == b'\n').count().saturating_sub(1)
        })
    }
    pub fn col(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column `{name}` in {:?}", self.header))
    }
    pub fn column(&self, name: &str) -> Vec<String> {
        let i = self.col(name);
        self.rows.iter().map(|r| r[i].clone()).collect()
    }
    pub fn hashes(&self) -> Vec<String> {
        self.column("config_hash")
    }
    /// (row index, objective) of the best `ok` row (minimum).
    pub fn min_ok(&self) -> Option<(usize, f64)> {
        let (st, obj) = (self.col("status"), self.col("objective"));
        self.rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r[st] == "ok")
            .map(|(i, r)| {
                (
                    i,
                    r[obj]
                        .parse::<f64>()
                        .expect("ok rows have a numeric objective"),
                )
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }
    pub fn get<'a>(&self, row: &'a [String], name: &str) -> &'a str {
        &row[self.col(name)]
    }
}

pub fn read_json(path: &Path) -> serde_json::Value {
    let bytes =
        std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()))
}
