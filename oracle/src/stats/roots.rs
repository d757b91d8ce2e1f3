//! A bracketing root finder (Brent's method), bounded in iterations.

/// Most iterations Brent's method may take; it converges in far fewer on our smooth functions.
const MAX_ITERATIONS: usize = 200;

/// Absolute tolerance on the root (scipy's `brentq` default, which Fishtest uses).
const X_TOLERANCE: f64 = 2e-12;

/// Relative tolerance on the root (4 ε, scipy's default).
const R_TOLERANCE: f64 = 4.0 * f64::EPSILON;

/// Finds a root of `f` in `[lo, hi]` where `f(lo)` and `f(hi)` have opposite signs (or one is 0).
///
/// Returns `None` when the interval does not bracket a root or `f` is not finite on it.
pub(crate) fn brent(f: impl Fn(f64) -> f64, lo: f64, hi: f64) -> Option<f64> {
    let (mut a, mut b) = (lo, hi);
    let (mut fa, mut fb) = (f(a), f(b));
    if !(fa.is_finite() && fb.is_finite()) {
        return None;
    }
    if fa == 0.0 {
        return Some(a);
    }
    if fb == 0.0 {
        return Some(b);
    }
    if fa.signum() == fb.signum() {
        return None;
    }
    // Brent (1973) as in Numerical Recipes' zbrent: c is the previous iterate on the other side.
    let (mut c, mut fc) = (b, fb);
    let (mut d, mut e) = (b - a, b - a);
    for _ in 0..MAX_ITERATIONS {
        if fb.signum() == fc.signum() {
            c = a;
            fc = fa;
            d = b - a;
            e = d;
        }
        if fc.abs() < fb.abs() {
            a = b;
            b = c;
            c = a;
            fa = fb;
            fb = fc;
            fc = fa;
        }
        let tol = 0.5 * (X_TOLERANCE + R_TOLERANCE * b.abs());
        let m = 0.5 * (c - b);
        if m.abs() <= tol || fb == 0.0 {
            return Some(b);
        }
        if e.abs() >= tol && fa.abs() > fb.abs() {
            // Inverse quadratic interpolation, or the secant step when only two points differ.
            let s = fb / fa;
            let (mut p, mut q);
            if a == c {
                p = 2.0 * m * s;
                q = 1.0 - s;
            } else {
                let qa = fa / fc;
                let r = fb / fc;
                p = s * (2.0 * m * qa * (qa - r) - (b - a) * (r - 1.0));
                q = (qa - 1.0) * (r - 1.0) * (s - 1.0);
            }
            if p > 0.0 {
                q = -q;
            }
            p = p.abs();
            if 2.0 * p < (3.0 * m * q - (tol * q).abs()).min((e * q).abs()) {
                e = d;
                d = p / q;
            } else {
                d = m;
                e = m;
            }
        } else {
            d = m;
            e = m;
        }
        a = b;
        fa = fb;
        b += if d.abs() > tol { d } else { tol.copysign(m) };
        fb = f(b);
        if !fb.is_finite() {
            return None;
        }
    }
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_roots_and_refuses_non_brackets() {
        let r = brent(|x| x * x - 2.0, 0.0, 2.0).unwrap();
        assert!((r - std::f64::consts::SQRT_2).abs() < 1e-12);
        let r = brent(|x| x.cos() - x, -1.0, 1.0).unwrap();
        assert!((r.cos() - r).abs() < 1e-12);
        assert_eq!(brent(|x| x * x + 1.0, -1.0, 1.0), None);
        assert_eq!(brent(|x| x - 1.0, 1.0, 3.0), Some(1.0));
    }
}
