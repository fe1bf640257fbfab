//! Cuts clang's JSON AST, as it streams, into its top-level declarations (the objects of the
//! translation unit's `inner` array), in memory bounded whatever one declaration's size:
//! - whitespace outside strings is never kept (clang indents each level, so a deep
//!   expression's dump grows with the square of its depth: a 46 KB kernel whose statement is
//!   a 2,000-term sum dumps gigabytes);
//! - a global variable's initialiser is never held: discovery reads a global's name and type,
//!   and the functions its initialiser names are collected as they stream by (a 16 MB lookup
//!   table dumps gigabytes of literals);
//! - any other declaration is held whole up to [`MAX_DECL_BYTES`]; past it, it is given up and
//!   only its head (every field but `inner`) and the functions it names are kept.

use std::collections::BTreeSet;

/// The most bytes of one declaration's JSON (whitespace dropped) held to be parsed whole: a
/// parsed tree takes about ten times its text.
pub const MAX_DECL_BYTES: usize = 16 << 20;

/// The most bytes of a global variable's JSON held whole: a constant's initialiser is read
/// ([`crate::mctree::constants`]), a lookup table's is not.
const MAX_GLOBAL_BYTES: usize = 4096;

/// Strings longer than this are never compared with a kind or kept as a name.
const MAX_STRING: usize = 4096;

/// One top-level declaration as it was cut, with the file its location is in (clang writes a
/// location's file only where it changes: the cutter follows it through the stream).
pub struct Cut<'a> {
    pub decl: Decl<'a>,
    pub file: &'a str,
}

/// One top-level declaration's JSON.
pub enum Decl<'a> {
    /// Its whole JSON.
    Whole(&'a [u8]),
    /// Too large to hold, or a global's: its JSON without what its `inner` held (`"inner":[]`),
    /// the functions named anywhere in it, and whether it carries `RestrictAttr` (declared
    /// `__attribute__((malloc))`).
    Head {
        head: &'a [u8],
        named: &'a BTreeSet<String>,
        restrict: bool,
    },
}

#[derive(Default)]
pub struct Cutter {
    /// How many objects and arrays are open.
    pub depth: u32,
    in_string: bool,
    escaped: bool,
    /// The container open at depth 2 is an array (the unit's `inner`).
    in_array: bool,
    /// The declaration being cut (depth ≥ 3).
    decl: Option<Cutting>,
    /// The file of the last location written.
    file: String,
}

/// What is kept of the declaration being cut.
#[derive(Default)]
struct Cutting {
    /// All of it, while it is small enough and not a global's.
    whole: Option<Vec<u8>>,
    /// All of it but the contents of its `inner` array.
    head: Vec<u8>,
    /// Within its `inner` array.
    in_inner: bool,
    /// The string being read, and the last three read (in order), with their depths.
    string: Vec<u8>,
    last: [(String, u32); 3],
    /// The last string at the declaration's own level (the key of a value that opens).
    key: String,
    kind: String,
    named: BTreeSet<String>,
    restrict: bool,
    /// The file of its location, once read.
    file: Option<String>,
    /// The most bytes held whole, when not [`MAX_DECL_BYTES`] (0).
    limit: usize,
}

impl Cutter {
    /// Hands each declaration completed in `chunk` to `each`.
    pub fn feed(&mut self, chunk: &[u8], each: &mut dyn FnMut(Cut)) {
        let blank = |b: &u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t');
        let mut i = 0;
        while i < chunk.len() {
            let rest = &chunk[i..];
            if !self.in_string && blank(&rest[0]) {
                // Most of a deep expression's dump is indentation: skipped in one sweep.
                i += rest.iter().position(|b| !blank(b)).unwrap_or(rest.len());
                continue;
            }
            if self.in_string && !self.escaped {
                // A string's plain bytes, up to its end or an escape, taken in one piece.
                let run = rest.iter().position(|&b| b == b'"' || b == b'\\');
                let run = run.unwrap_or(rest.len());
                if run > 0 {
                    if let Some(d) = &mut self.decl {
                        d.keep_str(&rest[..run]);
                    }
                    i += run;
                    continue;
                }
            }
            self.byte(chunk[i], each);
            i += 1;
        }
    }

    fn byte(&mut self, b: u8, each: &mut dyn FnMut(Cut)) {
        if self.in_string {
            let ended = !self.escaped && b == b'"';
            self.escaped = !self.escaped && b == b'\\';
            if let Some(d) = &mut self.decl {
                d.keep(b);
                match ended {
                    true => {
                        if let Some(f) = d.string_ended(self.depth) {
                            self.file = f;
                        }
                        // The declaration's own `loc` is written before its `range`.
                        if self.depth == 3 && d.key == "range" && d.file.is_none() {
                            d.file = Some(self.file.clone());
                        }
                    }
                    false if d.string.len() < MAX_STRING => d.string.push(b),
                    false => {}
                }
            }
            self.in_string = !ended;
            return;
        }
        match b {
            b' ' | b'\n' | b'\r' | b'\t' => {}
            b'"' => {
                self.in_string = true;
                if let Some(d) = &mut self.decl {
                    d.string.clear();
                    d.keep(b);
                }
            }
            b'{' | b'[' => self.open(b),
            b'}' | b']' => self.close(b, each),
            _ => {
                if let Some(d) = &mut self.decl {
                    d.keep(b);
                }
            }
        }
    }

    fn open(&mut self, b: u8) {
        self.depth += 1;
        match self.depth {
            2 => self.in_array = b == b'[',
            3 if self.in_array => {
                self.decl = Some(Cutting {
                    whole: Some(Vec::new()),
                    ..Cutting::default()
                })
            }
            _ => {}
        }
        if let Some(d) = &mut self.decl {
            d.keep(b);
            if self.depth == 4 && b == b'[' && d.key == "inner" {
                d.in_inner = true;
            }
        }
    }

    fn close(&mut self, b: u8, each: &mut dyn FnMut(Cut)) {
        if let Some(d) = &mut self.decl {
            if self.depth == 4 && d.in_inner {
                d.in_inner = false;
            }
            d.keep(b);
        }
        if self.depth == 3 {
            if let Some(d) = self.decl.take() {
                let file = d.file.as_deref().unwrap_or(&self.file);
                each(Cut {
                    decl: d.cut(),
                    file,
                });
            }
        }
        self.depth = self.depth.saturating_sub(1);
    }
}

impl Cutting {
    /// The most bytes of it held whole.
    fn limit(&self) -> usize {
        match self.limit {
            0 => MAX_DECL_BYTES,
            l => l,
        }
    }

    fn keep(&mut self, b: u8) {
        let limit = self.limit();
        if let Some(w) = &mut self.whole {
            w.push(b);
            if w.len() > limit {
                self.whole = None; // given up: its memory goes back now
            }
        }
        if !self.in_inner && self.head.len() <= MAX_DECL_BYTES {
            self.head.push(b);
        }
    }

    /// Plain bytes of a string.
    fn keep_str(&mut self, bytes: &[u8]) {
        let limit = self.limit();
        if let Some(w) = &mut self.whole {
            w.extend_from_slice(bytes);
            if w.len() > limit {
                self.whole = None;
            }
        }
        if !self.in_inner && self.head.len() <= MAX_DECL_BYTES {
            self.head.extend_from_slice(bytes);
        }
        let room = MAX_STRING.saturating_sub(self.string.len());
        self.string
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// A string ended at `depth`: the declaration's kind and keys; a function named
    /// (`"kind":"FunctionDecl","name":"f"` below the declaration's own level); `RestrictAttr`;
    /// a location's file (`"offset":N,"file":"…"`: not `includedFrom`'s), returned.
    fn string_ended(&mut self, depth: u32) -> Option<String> {
        let s = String::from_utf8_lossy(&self.string).into_owned();
        let prev = |k: usize| self.last[k].0.as_str();
        let file = ((prev(1), prev(2)) == ("offset", "file")).then(|| s.clone());
        if depth > 3 && (prev(0), prev(1), prev(2)) == ("kind", "FunctionDecl", "name") {
            self.named.insert(s.clone());
        }
        if prev(2) == "kind" {
            match depth {
                3 if self.kind.is_empty() => {
                    self.kind = s.clone();
                    if s == "VarDecl" {
                        self.limit = MAX_GLOBAL_BYTES; // a global: a large initialiser is not held
                    }
                }
                5 if s == "RestrictAttr" => self.restrict = true,
                _ => {}
            }
        }
        if depth == 3 {
            self.key = s.clone();
        }
        self.last.rotate_left(1);
        self.last[2] = (s, depth);
        file
    }

    fn cut(&self) -> Decl<'_> {
        match &self.whole {
            Some(w) => Decl::Whole(w),
            None => Decl::Head {
                head: &self.head,
                named: &self.named,
                restrict: self.restrict,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(json: &[u8], size: usize) -> (Vec<String>, u32) {
        let mut cutter = Cutter::default();
        let mut got = vec![];
        for chunk in json.chunks(size) {
            cutter.feed(chunk, &mut |c| {
                got.push(match c.decl {
                    Decl::Whole(w) => String::from_utf8(w.to_vec()).unwrap(),
                    Decl::Head {
                        head,
                        named,
                        restrict,
                    } => format!("{} {named:?} {restrict}", String::from_utf8_lossy(head)),
                })
            });
        }
        (got, cutter.depth)
    }

    /// However the stream is cut into chunks, the same declarations come out whole, without
    /// whitespace: braces and brackets inside strings (escaped quotes too) do not count; a
    /// global with a large initialiser comes out as its head and the functions it names.
    #[test]
    fn the_cutter_finds_each_top_level_declaration_across_chunks() {
        let big = format!(
            "{{\"kind\":\"IntegerLiteral\",\"value\":\"{}\"}}",
            "7".repeat(5000)
        );
        let json = format!(
            r#"{{"kind":"TranslationUnitDecl","loc":{{}},"range":{{"begin":{{}}}},"inner":[
            {{"kind":"TypedefDecl", "name":"a{{[\"}} x"}},
            {{"kind":"FunctionDecl","inner":[ {{"kind":"CompoundStmt","inner":[]}} ]}},
            {{"kind":"VarDecl","name":"x]","type":{{"qualType":"int (*[2])(void)"}},"inner":[
               {{"kind":"InitListExpr","inner":[{big},{{"kind":"DeclRefExpr","referencedDecl":
                 {{"id":"0x1","kind":"FunctionDecl","name":"f","type":{{}}}}}}]}}]}}]}}"#
        );
        let json = json.as_bytes();
        for size in [1, 2, 3, 7, 64, json.len()] {
            let (got, depth) = cut(json, size);
            assert_eq!(
                got,
                [
                    r#"{"kind":"TypedefDecl","name":"a{[\"} x"}"#,
                    r#"{"kind":"FunctionDecl","inner":[{"kind":"CompoundStmt","inner":[]}]}"#,
                    r#"{"kind":"VarDecl","name":"x]","type":{"qualType":"int (*[2])(void)"},"inner":[]} {"f"} false"#,
                ],
                "chunks of {size}"
            );
            assert_eq!(depth, 0);
        }
    }

    /// Each declaration comes with the file of its location: written where it changes (not the
    /// file an `includedFrom` names), else the one before it.
    #[test]
    fn each_declaration_carries_the_file_its_location_is_in() {
        let json = br#"{"kind":"TranslationUnitDecl","inner":[
            {"kind":"FunctionDecl","loc":{"offset":5,"file":"/usr/include/math.h","line":3,
              "includedFrom":{"file":"k.c"}},"range":{"begin":{"offset":1}},"name":"sqrt"},
            {"kind":"FunctionDecl","loc":{"offset":9},"range":{"begin":{"offset":9}},"name":"exp"},
            {"kind":"FunctionDecl","loc":{"spellingLoc":{"offset":7,"file":"k.c"},"expansionLoc":
              {"offset":7}},"range":{"begin":{"offset":7}},"name":"log"}]}"#;
        for size in [1, 5, json.len()] {
            let mut cutter = Cutter::default();
            let mut files = vec![];
            for chunk in json.chunks(size) {
                cutter.feed(chunk, &mut |c| files.push(c.file.to_string()));
            }
            assert_eq!(files, ["/usr/include/math.h", "/usr/include/math.h", "k.c"]);
        }
    }

    /// A declaration over the limit is given up: its head, the functions it names and its
    /// `RestrictAttr` are what is left.
    #[test]
    fn a_declaration_too_large_to_hold_leaves_its_head_and_the_functions_it_names() {
        let mut json = br#"{"inner":[{"kind":"FunctionDecl","name":"big","inner":[{"kind":"RestrictAttr"},{"kind":"CompoundStmt","inner":["#.to_vec();
        let call = br#"{"kind":"CallExpr","inner":[{"kind":"DeclRefExpr","referencedDecl":{"id":"0x2","kind":"FunctionDecl","name":"g"}}]},"#;
        while json.len() < MAX_DECL_BYTES + 1000 {
            json.extend_from_slice(call);
        }
        json.extend_from_slice(b"{}]}]}]}");
        let (got, depth) = cut(&json, 1 << 20);
        assert_eq!(
            got,
            [r#"{"kind":"FunctionDecl","name":"big","inner":[]} {"g"} true"#]
        );
        assert_eq!(depth, 0);
    }
}
