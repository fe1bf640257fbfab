//! The forest's tests: fits, splits, probability forests, scaling.

use super::*;

fn data(n: usize, rng: &mut Rng) -> (Vec<f64>, Vec<f64>) {
    let mut x = Vec::new();
    let mut y = Vec::new();
    for _ in 0..n {
        let a = rng.f64();
        let b = rng.f64();
        x.extend([a, b]);
        y.push((a - 0.3).powi(2) + 0.1 * b);
    }
    (x, y)
}

#[test]
fn fits_a_smooth_function_better_than_the_mean() {
    for p in [ForestParams::random_forest(), ForestParams::extra_trees()] {
        let mut rng = Rng::new(1);
        let (x, y) = data(200, &mut rng);
        let f = Forest::fit(&x, 2, &y, p, &mut rng);
        let (xt, yt) = data(200, &mut rng);
        let (mu, sd) = f.predict(&xt);
        let ybar = yt.iter().sum::<f64>() / yt.len() as f64;
        let mse: f64 = mu.iter().zip(&yt).map(|(a, b)| (a - b).powi(2)).sum();
        let base: f64 = yt.iter().map(|b| (ybar - b).powi(2)).sum();
        assert!(
            mse < 0.2 * base,
            "extra={} mse {mse} vs baseline {base}",
            p.extra
        );
        assert!(sd.iter().all(|s| s.is_finite() && *s >= 0.0));
    }
}

#[test]
fn uncertainty_is_larger_where_the_data_is_noisy() {
    let mut rng = Rng::new(2);
    // Feature 0 in [0, 0.5): y is exactly 1. In [0.5, 1): y is 1 plus noise of width 1.
    let mut x = Vec::new();
    let mut y = Vec::new();
    for _ in 0..200 {
        let a = rng.f64();
        x.push(a);
        y.push(if a < 0.5 { 1.0 } else { 1.0 + rng.f64() });
    }
    let f = Forest::fit(&x, 1, &y, ForestParams::random_forest(), &mut rng);
    let (_, sd) = f.predict(&[0.25, 0.75]);
    assert!(sd[0] < 0.05, "{sd:?}");
    assert!(sd[1] > 0.15, "{sd:?}");
}

#[test]
fn same_seed_same_forest() {
    let mut r1 = Rng::new(5);
    let (x, y) = data(50, &mut r1);
    let a = Forest::fit(&x, 2, &y, ForestParams::random_forest(), &mut Rng::new(9));
    let b = Forest::fit(&x, 2, &y, ForestParams::random_forest(), &mut Rng::new(9));
    assert_eq!(a.predict(&x), b.predict(&x));
}

#[test]
fn a_diagnosed_fit_is_the_same_forest() {
    let (x, y) = data(80, &mut Rng::new(6));
    for p in [ForestParams::random_forest(), ForestParams::extra_trees()] {
        let mut r1 = Rng::new(9);
        let mut r2 = Rng::new(9);
        let plain = Forest::fit(&x, 2, &y, p, &mut r1);
        let (diagnosed, diag) = Forest::fit_diagnosed(&x, 2, &y, p, &mut r2);
        assert_eq!(plain.predict(&x), diagnosed.predict(&x));
        assert_eq!(plain.importance(), diagnosed.importance());
        // The generator is left where a plain fit leaves it: later draws are unchanged.
        assert_eq!(r1.next_u64(), r2.next_u64());
        // The splits carry the whole impurity decrease.
        let mut gain = [0.0; 2];
        diag.splits.iter().for_each(|s| gain[s.feature] += s.gain);
        let total = gain[0] + gain[1];
        for (g, i) in gain.iter().zip(plain.importance()) {
            assert!((g / total - i).abs() < 1e-12);
        }
    }
}

#[test]
fn out_of_bag_r2_is_high_on_signal_and_low_on_noise() {
    let mut rng = Rng::new(4);
    let (x, y) = data(100, &mut rng);
    let p = ForestParams::random_forest();
    let (_, diag) = Forest::fit_diagnosed(&x, 2, &y, p, &mut rng);
    // About 37% of the trees leave out each row: with 100 trees, every row is predicted.
    assert!(diag.oob.iter().all(Option::is_some));
    let r2 = diag.oob_r2(&y).unwrap();
    assert!(r2 > 0.8, "{r2}");
    let noise: Vec<f64> = (0..100).map(|_| rng.f64()).collect();
    let (_, diag) = Forest::fit_diagnosed(&x, 2, &noise, p, &mut rng);
    let r2 = diag.oob_r2(&noise).unwrap();
    assert!(r2 < 0.0, "{r2}");
    // Extra trees see every row: nothing is out of bag.
    let (_, diag) = Forest::fit_diagnosed(&x, 2, &y, ForestParams::extra_trees(), &mut rng);
    assert!(diag.oob.iter().all(Option::is_none));
    assert_eq!(diag.oob_r2(&y), None);
}

#[test]
fn out_of_bag_r2_is_undefined_for_a_constant_target() {
    let d = Diagnostics {
        oob: vec![Some(1.0), Some(1.0), None],
        splits: vec![],
    };
    assert_eq!(d.oob_r2(&[1.0, 1.0, 5.0]), None);
    let d = Diagnostics {
        oob: vec![Some(1.0), Some(3.0)],
        splits: vec![],
    };
    assert_eq!(d.oob_r2(&[1.0, 3.0]), Some(1.0));
}
