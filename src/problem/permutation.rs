//! A `permutation` parameter: an order of `items` (a loop nest's loops), its value the items
//! joined by a separator (`FOR_K FOR_I FOR_J`). Its coordinate is the order's rank among all
//! orders of the items, lexicographic by the items' positions in the problem file (rank 0 is
//! the order given).
//!
//! The models see an order through its pairs, not its rank: one 0/1 feature per pair of
//! items, 1 when the pair is swapped from the order given ([`Permutation::push_pairs`]; the
//! order given is all zeros, and a permutation of two items reads as the categorical of its
//! two orders would). Two orders differ on as many of these features as Kendall's tau
//! distance counts discordant pairs, so the GP's overlap kernel on them is a Mallows kernel (Jiao & Vert 2015) with a learned
//! weight per pair, and one tree split asks "does k come before i" — where a rank or a
//! one-hot category would make `FOR_K FOR_I FOR_J` as far from `FOR_K FOR_J FOR_I` as from
//! `FOR_I FOR_J FOR_K`.

use std::collections::HashMap;

/// The most items a permutation may order (8! = 40,320 orders).
pub const MAX_ITEMS: usize = 8;

#[derive(Debug, Clone, PartialEq)]
pub struct Permutation {
    pub items: Vec<String>,
    pub separator: String,
    /// Every order's text, by rank.
    pub texts: Vec<String>,
    /// Each text's rank (fewer entries than `texts` when two orders read alike).
    ranks: HashMap<String, usize>,
    /// Per rank, each item's position in that order (`items.len()` entries a rank).
    positions: Vec<u8>,
}

impl Permutation {
    /// The orders of `items` (1 to [`MAX_ITEMS`] of them: the caller checks), computed once:
    /// a problem is read once and its orders looked up for every configuration.
    pub fn new(items: Vec<String>, separator: String) -> Permutation {
        let n = items.len();
        let count: usize = (1..=n).product();
        let (mut texts, mut positions) = (Vec::with_capacity(count), Vec::with_capacity(count * n));
        for rank in 0..count {
            let order = unrank(n, rank);
            let words: Vec<&str> = order.iter().map(|&k| items[k].as_str()).collect();
            texts.push(words.join(&separator));
            let at = positions.len();
            positions.resize(at + n, 0);
            for (p, &item) in order.iter().enumerate() {
                positions[at + item] = p as u8;
            }
        }
        let ranks = (texts.iter().enumerate())
            .map(|(r, t)| (t.clone(), r))
            .collect();
        Permutation {
            items,
            separator,
            texts,
            ranks,
            positions,
        }
    }

    /// The rank of the order written `text`.
    pub fn rank(&self, text: &str) -> Option<usize> {
        self.ranks.get(text).copied()
    }

    /// A text two orders share (items that contain the separator can join into one text).
    pub fn ambiguous(&self) -> Option<&str> {
        let repeated = (self.ranks.len() < self.texts.len()).then(|| {
            self.texts
                .iter()
                .enumerate()
                .find(|(r, t)| self.ranks[*t] != *r)
        });
        repeated.flatten().map(|(_, t)| t.as_str())
    }

    /// What a value must be: "an order of `a`, `b` separated by ` `".
    pub fn describe(&self) -> String {
        let items: Vec<String> = self.items.iter().map(|i| format!("`{i}`")).collect();
        format!(
            "an order of {} separated by `{}`",
            items.join(", "),
            self.separator
        )
    }

    /// The number of pair features ([`Permutation::push_pairs`]).
    pub fn pairs(&self) -> usize {
        let n = self.items.len();
        n * n.saturating_sub(1) / 2
    }

    /// Appends the pair features of the order of rank `coord` (`inactive` for each when
    /// `coord` is NaN): for items a < b (problem-file order), 1 when b comes before a.
    pub fn push_pairs(&self, coord: f64, inactive: f64, out: &mut Vec<f64>) {
        if coord.is_nan() {
            out.extend(std::iter::repeat_n(inactive, self.pairs()));
            return;
        }
        let n = self.items.len();
        let position = &self.positions[coord as usize * n..][..n];
        for a in 0..n {
            for b in a + 1..n {
                out.push((position[b] < position[a]) as u8 as f64);
            }
        }
    }
}

/// The order of lexicographic rank `r` of `n` items (the factorial number system): item
/// indices, first to last.
fn unrank(n: usize, mut r: usize) -> Vec<usize> {
    let mut left: Vec<usize> = (0..n).collect();
    let mut out = Vec::with_capacity(n);
    for k in (0..n).rev() {
        let f: usize = (1..=k).product();
        let i = (r / f).min(left.len() - 1);
        r %= f;
        out.push(left.remove(i));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loops() -> Permutation {
        let items = ["FOR_I", "FOR_J", "FOR_K"].map(String::from).to_vec();
        Permutation::new(items, " ".into())
    }

    #[test]
    fn orders_are_ranked_lexicographically_from_the_order_given() {
        let p = loops();
        assert_eq!(p.texts.len(), 6);
        assert_eq!(p.texts[0], "FOR_I FOR_J FOR_K");
        assert_eq!(p.texts[1], "FOR_I FOR_K FOR_J");
        assert_eq!(p.texts[5], "FOR_K FOR_J FOR_I");
        assert_eq!(unrank(3, 4), vec![2, 0, 1]);
        assert_eq!(p.rank("FOR_K FOR_I FOR_J"), Some(4));
        assert_eq!(p.rank("FOR_K FOR_K FOR_J"), None);
    }

    #[test]
    fn pair_features_differ_as_kendall_s_distance_counts() {
        let p = loops();
        let pairs = |r: f64| {
            let mut v = Vec::new();
            p.push_pairs(r, -1.0, &mut v);
            v
        };
        let differ = |a: f64, b: f64| {
            (pairs(a).iter().zip(&pairs(b)))
                .filter(|(x, y)| x != y)
                .count()
        };
        // IJK and KJI are reversed: every pair discordant. KIJ and KJI differ by one swap.
        assert_eq!(differ(0.0, 5.0), 3);
        assert_eq!(differ(4.0, 5.0), 1);
        assert_eq!(differ(0.0, 1.0), 1);
        assert_eq!(pairs(0.0), vec![0.0, 0.0, 0.0]);
        assert_eq!(pairs(f64::NAN), vec![-1.0; 3]);
    }

    /// A problem file with one parameter written as `param` (YAML flow mapping), loaded.
    fn load(param: &str) -> Result<crate::problem::Problem, crate::error::Error> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("k.c"), "int main(void) { #P0 return 0; }\n").unwrap();
        let yaml = format!(
            "mold: k.c\nparams:\n  - {param}\n\
             compile: \"cc {{{{ source }}}} -o {{{{ exe }}}}\"\nrun: \"{{{{ exe }}}}\"\n"
        );
        let path = dir.path().join("k.yaml");
        std::fs::write(&path, yaml).unwrap();
        crate::problem::Problem::load(&path)
    }

    #[test]
    fn a_problem_file_declares_a_permutation_and_its_models_see_pairs() {
        let p = load(
            "{name: P0, type: permutation, items: [a, b, c], separator: \",\", default: \"b,a,c\"}",
        )
        .unwrap();
        let space = &p.space;
        let param = &space.params[0];
        assert_eq!(param.cardinality(), Some(6));
        assert_eq!(param.text(param.default), "b,a,c");
        assert_eq!(param.parse_cell("c,b,a"), Some(5.0));
        let c = space.default_config();
        assert_eq!(space.kernel_features(&c), vec![1.0, 0.0, 0.0]);
        assert_eq!(space.categorical_mask(), vec![true; 3]);
        assert_eq!(space.tree_width(), 3);
        assert_eq!(space.tree_features(&c), vec![1.0, 0.0, 0.0]);
    }

    #[test]
    fn permutation_mistakes_say_what_to_write() {
        let message = |param: &str| load(param).unwrap_err().to_string();
        let m = message("{name: P0, type: permutation}");
        assert!(m.contains("needs `items`"), "{m}");
        let m = message("{name: P0, type: permutation, items: [a, b, a]}");
        assert!(m.contains("lists `a` twice"), "{m}");
        let m = message("{name: P0, type: permutation, items: [a, b], default: \"a a\"}");
        assert!(
            m.contains("default `a a` is not a value") && m.contains("an order of `a`, `b`"),
            "{m}"
        );
        let m = message("{name: P0, type: permutation, items: [a, b], choices: [x]}");
        assert!(m.contains("`choices` does not apply"), "{m}");
        let m = message("{name: P0, type: permutation, items: [a, b, c, d, e, f, g, h, i]}");
        assert!(m.contains("has 9 items") && m.contains("1 to 8"), "{m}");
        // A separator inside an item joins two orders into one text.
        let m = message("{name: P0, type: permutation, items: [\"a b\", c, a, \"b c\"]}");
        assert!(m.contains("twice"), "{m}");
    }
}
