//! Code molds: C sources with `#NAME` markers (`#P0 … #Pn`) that rendering replaces with
//! parameter values.
//!
//! A marker is `#` followed by a whole identifier, so `#P1` never matches inside `#P10`.
//! `#pragma`, `#include` and other directives are untouched unless a parameter has that name.
//! Any `#P<digits>` that names no parameter is an error, as is a parameter that appears neither
//! in the mold nor in a command template.
//!
//! A mold may also have insertion points ([`Placement`]): labelled places (mctree's loops)
//! where one parameter's value — a `; `-separated list of `LABEL: TEXT` entries — puts each
//! `TEXT` on a line of its own. The source needs no markers for them.

use std::path::{Path, PathBuf};

use regex::Regex;

use crate::error::{Error, Span};
use crate::problem::space::{Config, Space};

#[derive(Debug, Clone)]
pub struct Mold {
    pub path: PathBuf,
    pub text: String,
    /// Byte ranges of markers and the parameter each one stands for, in order.
    markers: Vec<(std::ops::Range<usize>, usize)>,
    placement: Option<Placement>,
}

/// A place in the text where entries are inserted: before byte `at`, each on its own line
/// followed by `indent` (the indentation of what was at `at`).
#[derive(Debug, Clone)]
pub struct Point {
    pub label: String,
    pub at: usize,
    pub indent: String,
}

/// Insertion points fed by parameter `param`; every entry is written as `prefix` + `TEXT`,
/// or as `TEXT` alone when it starts with `#` (a whole directive of another kind).
#[derive(Debug, Clone)]
pub struct Placement {
    pub param: usize,
    pub points: Vec<Point>,
    pub prefix: String,
}

impl Placement {
    /// The `(label, text)` entries of a value, in order.
    pub fn entries(value: &str) -> impl Iterator<Item = (&str, &str)> {
        value
            .split("; ")
            .filter_map(|e| e.split_once(": "))
            .map(|(l, t)| (l.trim(), t.trim()))
    }

    /// The insertions a value makes: (byte offset, text), in order of the value.
    fn insertions(&self, value: &str) -> Vec<(usize, String)> {
        Placement::entries(value)
            .filter_map(|(label, text)| {
                let p = self.points.iter().find(|p| p.label == label)?;
                // A directive written whole (`#pragma clang loop …` among `#pragma omp …`
                // ones) is inserted as written.
                let prefix = if text.starts_with('#') {
                    ""
                } else {
                    &self.prefix
                };
                Some((p.at, format!("{prefix}{text}\n{}", p.indent)))
            })
            .collect()
    }
}

fn marker_regex() -> Regex {
    Regex::new(r"#([A-Za-z_][A-Za-z0-9_]*)").expect("valid regex")
}

/// 1-based line and column of byte offset `at`.
pub fn line_col(text: &str, at: usize) -> (u32, u32) {
    let before = &text[..at];
    let line = before.matches('\n').count() as u32 + 1;
    let col = before.rfind('\n').map_or(at, |nl| at - nl - 1) as u32 + 1;
    (line, col)
}

/// A C source's text. Bytes that are not UTF-8 (a Latin-1 name in a comment) are accepted in
/// comments, where they read as `?`, one for one, so that byte offsets stay the compiler's;
/// anywhere else (a string literal) they are refused with the byte's line:col: written back
/// as text they would change the program.
pub fn c_text(path: &Path, bytes: Vec<u8>) -> Result<String, Error> {
    let mut bytes = match String::from_utf8(bytes) {
        Ok(text) => return Ok(text),
        Err(e) => e.into_bytes(),
    };
    let comments = comments(&bytes);
    let mut at = 0;
    let mut bad = vec![];
    for chunk in bytes.utf8_chunks() {
        at += chunk.valid().len();
        bad.extend(at..at + chunk.invalid().len());
        at += chunk.invalid().len();
    }
    for i in bad {
        if !comments.iter().any(|c| c.contains(&i)) {
            // Every byte before `i` that was not UTF-8 lay in a comment and is `?` by now.
            let before = std::str::from_utf8(&bytes[..i]).unwrap_or_default();
            let (line, col) = line_col(before, before.len());
            return Err(Error::Config {
                span: Span {
                    file: path.to_path_buf(),
                    line,
                    col,
                },
                message: format!("byte 0x{:02X} is not UTF-8 and not in a comment", bytes[i]),
                hint: Some(format!(
                    "moldtune writes variants as UTF-8 text (bytes that are not are accepted only in comments): convert the file, e.g. `iconv -f latin1 -t utf-8 {0} > {0}.utf8`",
                    path.display()
                )),
            });
        }
        bytes[i] = b'?';
    }
    Ok(String::from_utf8(bytes).expect("every byte that was not UTF-8 is now `?`"))
}

/// The byte ranges of a C source's comments (`//` to the end of the line, `/* … */`), string
/// and character literals skipped.
fn comments(b: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = vec![];
    let mut i = 0;
    while i < b.len() {
        let end = match (b[i], b.get(i + 1)) {
            (b'/', Some(b'/')) => {
                let e = line_end(b, i);
                out.push(i..e);
                e
            }
            (b'/', Some(b'*')) => {
                let e = (b[i + 2..].windows(2).position(|w| w == b"*/"))
                    .map_or(b.len(), |p| i + 2 + p + 2);
                out.push(i..e);
                e
            }
            (q @ (b'"' | b'\''), _) => literal_end(b, i, q),
            _ => i + 1,
        };
        i = end;
    }
    out
}

/// Where a `//` comment starting at `i` ends: at a newline not escaped by a backslash.
fn line_end(b: &[u8], i: usize) -> usize {
    let mut j = i;
    while j < b.len() {
        if b[j] == b'\n' && !(j > 0 && b[j - 1] == b'\\') {
            return j;
        }
        j += 1;
    }
    j
}

/// Where the literal quoted by `q` at `i` ends (after its closing quote, or at the line's end).
fn literal_end(b: &[u8], i: usize, q: u8) -> usize {
    let mut j = i + 1;
    while j < b.len() && b[j] != q && b[j] != b'\n' {
        j += if b[j] == b'\\' { 2 } else { 1 };
    }
    (j + 1).min(b.len())
}

/// The file a variant of the mold at `path` is written to: `variant.` and the mold's own
/// suffix (`train.mold.py` → `variant.py`, `k.c` → `variant.c`); `variant.c` for a mold
/// without one.
pub fn variant_file(path: &Path) -> String {
    match path.extension().and_then(|e| e.to_str()) {
        Some(ext) if !ext.is_empty() && ext != "mold" => format!("variant.{ext}"),
        _ => "variant.c".into(),
    }
}

impl Mold {
    /// No mold: a problem whose evaluations are told renders nothing.
    pub fn none() -> Mold {
        Mold {
            path: PathBuf::new(),
            text: String::new(),
            markers: Vec::new(),
            placement: None,
        }
    }

    /// The file its variants are written to ([`variant_file`]).
    pub fn variant_file(&self) -> String {
        variant_file(&self.path)
    }

    /// The run directory's copy of the best variant: `best.` and the variants' suffix
    /// (`best.c`, `best.py`).
    pub fn best_file(&self) -> String {
        self.variant_file().replacen("variant", "best", 1)
    }

    pub fn load(path: &Path, space: &Space) -> Result<Mold, Error> {
        let bytes = std::fs::read(path).map_err(|e| Error::ConfigFile {
            file: path.to_path_buf(),
            message: format!("cannot read the mold: {e}"),
            hint: Some("`mold:` is resolved relative to the problem file's directory".into()),
        })?;
        Mold::parse(path, c_text(path, bytes)?, space)
    }

    pub fn parse(path: &Path, text: String, space: &Space) -> Result<Mold, Error> {
        let unknown = Regex::new(r"^P[0-9]+$").expect("valid regex");
        let mut markers = Vec::new();
        for cap in marker_regex().captures_iter(&text) {
            let whole = cap.get(0).expect("group 0");
            let name = &cap[1];
            match space.index_of(name) {
                Some(i) => markers.push((whole.range(), i)),
                None if unknown.is_match(name) => {
                    let (line, col) = line_col(&text, whole.start());
                    return Err(Error::Config {
                        span: Span {
                            file: path.to_path_buf(),
                            line,
                            col,
                        },
                        message: format!("marker `#{name}` has no parameter"),
                        hint: Some(format!(
                            "add a parameter named `{name}` to `params:` or remove the marker"
                        )),
                    });
                }
                None => {}
            }
        }
        Ok(Mold {
            path: path.to_path_buf(),
            text,
            markers,
            placement: None,
        })
    }

    /// Warnings for tokens that look like markers (`#` and an upper-case name: `#TILE`,
    /// `#XX`) but name no parameter: they stay in the variant as written, which is rarely
    /// what was meant. "k.c:3:9: `#XX` looks like a marker but names no parameter; …".
    pub fn unnamed_markers(&self, space: &Space) -> Vec<String> {
        let upper = |n: &str| {
            n.chars().any(|c| c.is_ascii_uppercase()) && !n.chars().any(|c| c.is_ascii_lowercase())
        };
        let mut out = Vec::new();
        for cap in marker_regex().captures_iter(&self.text) {
            let name = &cap[1];
            if space.index_of(name).is_some() || !upper(name) {
                continue;
            }
            let (line, col) = line_col(&self.text, cap.get(0).expect("group 0").start());
            out.push(format!(
                "{}:{line}:{col}: `#{name}` looks like a marker but names no parameter; it stays in the variant as written",
                self.path.display()
            ));
        }
        out
    }

    /// A mold without markers whose parameter `placement.param` inserts text at points.
    pub fn with_placement(path: &Path, text: String, placement: Placement) -> Mold {
        Mold {
            path: path.to_path_buf(),
            text,
            markers: vec![],
            placement: Some(placement),
        }
    }

    /// Whether parameter `i` has at least one marker.
    pub fn uses(&self, i: usize) -> bool {
        self.markers.iter().any(|(_, p)| *p == i)
            || self.placement.as_ref().is_some_and(|p| p.param == i)
    }

    pub fn render(&self, space: &Space, c: &Config) -> String {
        // (byte range replaced, text), in order of the text; an insertion is an empty range.
        let mut edits: Vec<(std::ops::Range<usize>, String)> = (self.markers.iter())
            .map(|(range, i)| (range.clone(), space.params[*i].text(c.0[*i])))
            .collect();
        if let Some(p) = &self.placement {
            let value = space.params[p.param].text(c.0[p.param]);
            edits.extend(p.insertions(&value).into_iter().map(|(at, t)| (at..at, t)));
            edits.sort_by_key(|(r, _)| r.start);
        }
        let mut out = String::with_capacity(self.text.len() + 256);
        let mut last = 0;
        for (range, text) in edits {
            out.push_str(&self.text[last..range.start]);
            out.push_str(&text);
            last = range.end;
        }
        out.push_str(&self.text[last..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::param::{Kind, Param, Scalar};

    fn space(names: &[&str]) -> Space {
        Space {
            params: names
                .iter()
                .map(|n| Param {
                    name: n.to_string(),
                    kind: Kind::Ordinal(vec![Scalar::Int(7), Scalar::Int(1000)]),
                    default: 0.0,
                    condition: None,
                })
                .collect(),
            order: (0..names.len()).collect(),
            forbidden: vec![],
            constraints: vec![],
        }
    }

    /// Bytes that are not UTF-8 read as `?` in comments (offsets kept), and are refused at
    /// their line:col anywhere else; string literals hide comment markers.
    #[test]
    fn bytes_that_are_not_utf8_are_accepted_in_comments_only() {
        let p = Path::new("k.c");
        let src = b"/* Jos\xe9 */ int a; // \xe9t\xe9\nchar *s = \"/*\"; /* \xff */\n".to_vec();
        let t = c_text(p, src.clone()).unwrap();
        assert_eq!(t.len(), src.len());
        assert_eq!(t, "/* Jos? */ int a; // ?t?\nchar *s = \"/*\"; /* ? */\n");
        let lit = b"int a;\nchar *s = \"caf\xe9\"; /* x */\n".to_vec();
        let e = c_text(p, lit).unwrap_err().to_string();
        assert!(e.contains("k.c:2:15") && e.contains("0xE9"), "{e}");
        let hidden = b"char *s = \"/* \xe9 */\";\n".to_vec();
        assert!(c_text(p, hidden).is_err());
    }

    #[test]
    fn p1_never_matches_inside_p10() {
        let names: Vec<String> = (0..11).map(|i| format!("P{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let s = space(&refs);
        let m = Mold::parse(
            Path::new("m.c"),
            "#include <x.h>\n#pragma omp tile sizes(#P1,#P10) #P1_x #P1\n".into(),
            &s,
        )
        .unwrap();
        let mut c = s.default_config();
        c.0[10] = 1.0;
        let r = m.render(&s, &c);
        assert_eq!(
            r,
            "#include <x.h>\n#pragma omp tile sizes(7,1000) #P1_x 7\n"
        );
    }

    #[test]
    fn unknown_marker_is_an_error_with_position() {
        let s = space(&["P0"]);
        let e = Mold::parse(Path::new("m.c"), "int x;\n  a = #P0 + #P3;\n".into(), &s).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("m.c:2:13: marker `#P3` has no parameter"),
            "{msg}"
        );
    }
}
