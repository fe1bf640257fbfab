//! What the machine moldtune runs on offers, read without measuring anything: the width and
//! number of its vector registers (from the instruction sets the CPU reports), its cores and
//! the sizes of its data caches (from Linux's `/sys/devices/system/cpu/cpu0/cache`). A problem
//! file's expressions name them as `machine.<fact>` (docs/problem-file.md), so that a space
//! written once keeps, say, its register tiles within the registers of whichever machine it is
//! tuned on; `moldtune machine` prints them beside the limits it measures.
//!
//! The facts are those of the machine that loads the problem: with `--executor slurm`, the
//! compute nodes must be of the same kind.

use std::path::Path;

/// Every fact, with what it is (`moldtune machine`, and the hint of an unknown name).
pub const FACTS: [(&str, &str); 6] = [
    ("vector_doubles", "doubles per vector register"),
    ("vector_registers", "vector registers"),
    ("cores", "cores this process may use"),
    ("l1d_bytes", "bytes of one core's level-1 data cache"),
    ("l2_bytes", "bytes of one core's level-2 cache"),
    ("l3_bytes", "bytes of the level-3 cache"),
];

/// The facts read from this machine; `None` where it does not say.
#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    /// Doubles per vector register and the number of vector registers.
    pub vectors: Option<(u32, u32)>,
    pub cores: usize,
    /// The data (or unified) cache of levels 1, 2 and 3, in bytes.
    pub caches: [Option<u64>; 3],
}

impl Host {
    /// This machine's facts.
    pub fn read() -> Host {
        Host {
            vectors: vectors(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            caches: caches(Path::new("/sys/devices/system/cpu/cpu0/cache")),
        }
    }

    /// The fact `name` (without its `machine.` prefix), or why there is none.
    pub fn fact(&self, name: &str) -> Result<u64, String> {
        let unknown = |what: &str| format!("this machine does not say {what}");
        let value = match name {
            "vector_doubles" => self.vectors.map(|v| u64::from(v.0)),
            "vector_registers" => self.vectors.map(|v| u64::from(v.1)),
            "cores" => Some(self.cores as u64),
            "l1d_bytes" => self.caches[0],
            "l2_bytes" => self.caches[1],
            "l3_bytes" => self.caches[2],
            _ => {
                let names: Vec<String> = FACTS.iter().map(|f| format!("machine.{}", f.0)).collect();
                return Err(format!(
                    "unknown machine fact `machine.{name}` (known: {})",
                    names.join(", ")
                ));
            }
        };
        let what = FACTS.iter().find(|f| f.0 == name).map_or(name, |f| f.1);
        value.ok_or_else(|| unknown(what))
    }
}

/// Doubles per vector and vector registers of the widest instruction set the CPU reports
/// (what `-march=native` compiles for): AVX-512 32 of 8, AVX 16 of 4, SSE2 16 of 2; Arm's
/// NEON 32 of 2.
fn vectors() -> Option<(u32, u32)> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            return Some((8, 32));
        }
        if std::is_x86_feature_detected!("avx") {
            return Some((4, 16));
        }
        Some((2, 16))
    }
    #[cfg(target_arch = "aarch64")]
    {
        Some((2, 32))
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        None
    }
}

/// The sizes of the level-1 data, level-2 and level-3 caches listed under `dir` (Linux's
/// `index<k>/{level,type,size}`, sizes as `32K` or `2M`).
fn caches(dir: &Path) -> [Option<u64>; 3] {
    let mut out = [None; 3];
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let read = |f: &str| std::fs::read_to_string(entry.path().join(f)).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        let level: usize = level.trim().parse().unwrap_or(0);
        if (1..=3).contains(&level) && kind.trim() != "Instruction" {
            out[level - 1] = bytes(size.trim());
        }
    }
    out
}

/// `32K`, `2M` or `1048576` in bytes.
fn bytes(text: &str) -> Option<u64> {
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let scale = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    digits.parse::<u64>().ok().map(|n| n * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_are_read_in_the_units_linux_writes() {
        assert_eq!(bytes("32K"), Some(32 * 1024));
        assert_eq!(bytes("2M"), Some(2 << 20));
        assert_eq!(bytes("4096"), Some(4096));
        assert_eq!(bytes("12Q"), None);
        assert_eq!(bytes(""), None);
    }

    #[test]
    fn the_data_caches_are_read_and_the_instruction_cache_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let index = |k: usize, level: &str, kind: &str, size: &str| {
            let d = dir.path().join(format!("index{k}"));
            std::fs::create_dir(&d).unwrap();
            for (f, v) in [("level", level), ("type", kind), ("size", size)] {
                std::fs::write(d.join(f), format!("{v}\n")).unwrap();
            }
        };
        index(0, "1", "Data", "48K");
        index(1, "1", "Instruction", "32K");
        index(2, "2", "Unified", "2048K");
        assert_eq!(caches(dir.path()), [Some(48 << 10), Some(2 << 20), None]);
        assert_eq!(caches(&dir.path().join("absent")), [None; 3]);
    }

    #[test]
    fn a_fact_is_named_or_refused_with_the_known_names() {
        let host = Host {
            vectors: Some((4, 16)),
            cores: 2,
            caches: [Some(32 << 10), None, None],
        };
        assert_eq!(host.fact("vector_registers"), Ok(16));
        assert_eq!(host.fact("l1d_bytes"), Ok(32768));
        let missing = host.fact("l2_bytes").unwrap_err();
        assert!(missing.contains("level-2"), "{missing}");
        let unknown = host.fact("registers").unwrap_err();
        assert!(unknown.contains("machine.vector_registers"), "{unknown}");
    }
}
