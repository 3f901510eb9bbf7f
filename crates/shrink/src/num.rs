//! Signed integers of any size, just enough arithmetic for moving integers toward zero.
//!
//! [`freezegate_canon::Int`] keeps decimal text; the integer pass needs halving, adding and
//! subtracting on values that may not fit an `i128`, so this module holds a small signed
//! number in base 10⁹ limbs.

use std::cmp::Ordering;

use freezegate_canon::Int;

const BASE: u64 = 1_000_000_000;

/// A signed integer: sign and magnitude, magnitude as little-endian base-10⁹ limbs without
/// trailing zero limbs. Zero has no limbs and is never negative.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Num {
    neg: bool,
    mag: Vec<u32>,
}

impl Num {
    /// Zero.
    pub(crate) fn zero() -> Num {
        Num {
            neg: false,
            mag: Vec::new(),
        }
    }

    /// A small non-negative number.
    pub(crate) fn small(n: u32) -> Num {
        Num::from_parts(false, vec![n % 1_000_000_000, n / 1_000_000_000])
    }

    fn from_parts(neg: bool, mut mag: Vec<u32>) -> Num {
        while mag.last() == Some(&0) {
            mag.pop();
        }
        let neg = neg && !mag.is_empty();
        Num { neg, mag }
    }

    /// The number an [`Int`] spells.
    pub(crate) fn from_int(n: &Int) -> Num {
        let digits = n.magnitude_digits().as_bytes();
        let mut mag = Vec::with_capacity(digits.len() / 9 + 1);
        let mut end = digits.len();
        while end > 0 {
            let start = end.saturating_sub(9);
            let limb = digits[start..end]
                .iter()
                .fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'));
            mag.push(limb);
            end = start;
        }
        Num::from_parts(n.is_negative(), mag)
    }

    /// The number as an [`Int`].
    pub(crate) fn to_int(&self) -> Int {
        let mut text = String::with_capacity(self.mag.len() * 9 + 1);
        if self.neg {
            text.push('-');
        }
        match self.mag.split_last() {
            None => text.push('0'),
            Some((top, rest)) => {
                text.push_str(&top.to_string());
                for limb in rest.iter().rev() {
                    text.push_str(&format!("{limb:09}"));
                }
            }
        }
        // The text is an optional '-' and ASCII digits by construction.
        Int::parse(&text).unwrap_or_else(|_| Int::from(0u8))
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.mag.is_empty()
    }

    pub(crate) fn is_negative(&self) -> bool {
        self.neg
    }

    /// The absolute value.
    pub(crate) fn abs(&self) -> Num {
        Num {
            neg: false,
            mag: self.mag.clone(),
        }
    }

    /// `-self`.
    pub(crate) fn negated(&self) -> Num {
        Num::from_parts(!self.neg, self.mag.clone())
    }

    /// The absolute value of `self` with the sign of `sign_of`.
    pub(crate) fn with_sign_of(&self, sign_of: &Num) -> Num {
        Num::from_parts(sign_of.neg, self.mag.clone())
    }

    /// Compares absolute values.
    pub(crate) fn cmp_abs(&self, other: &Num) -> Ordering {
        self.mag.len().cmp(&other.mag.len()).then_with(|| {
            for (a, b) in self.mag.iter().rev().zip(other.mag.iter().rev()) {
                match a.cmp(b) {
                    Ordering::Equal => {}
                    unequal => return unequal,
                }
            }
            Ordering::Equal
        })
    }

    /// `self + other`.
    pub(crate) fn add(&self, other: &Num) -> Num {
        if self.neg == other.neg {
            return Num::from_parts(self.neg, add_mag(&self.mag, &other.mag));
        }
        match self.cmp_abs(other) {
            Ordering::Equal => Num::zero(),
            Ordering::Greater => Num::from_parts(self.neg, sub_mag(&self.mag, &other.mag)),
            Ordering::Less => Num::from_parts(other.neg, sub_mag(&other.mag, &self.mag)),
        }
    }

    /// `self - other`.
    pub(crate) fn sub(&self, other: &Num) -> Num {
        self.add(&other.negated())
    }

    /// `self / 2`, rounded toward zero.
    pub(crate) fn half(&self) -> Num {
        let mut mag = self.mag.clone();
        let mut carry = 0u64;
        for limb in mag.iter_mut().rev() {
            let cur = carry * BASE + u64::from(*limb);
            // cur / 2 < BASE, so it fits a limb.
            *limb = u32::try_from(cur / 2).unwrap_or(0);
            carry = cur % 2;
        }
        Num::from_parts(self.neg, mag)
    }
}

fn add_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len().max(b.len()) + 1);
    let mut carry = 0u64;
    for i in 0..a.len().max(b.len()) {
        let sum = carry
            + u64::from(a.get(i).copied().unwrap_or(0))
            + u64::from(b.get(i).copied().unwrap_or(0));
        out.push(u32::try_from(sum % BASE).unwrap_or(0));
        carry = sum / BASE;
    }
    if carry > 0 {
        out.push(u32::try_from(carry).unwrap_or(0));
    }
    out
}

/// `a - b` for `a >= b`.
fn sub_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0i64;
    for (i, &limb) in a.iter().enumerate() {
        let mut d = i64::from(limb) - borrow - i64::from(b.get(i).copied().unwrap_or(0));
        borrow = 0;
        if d < 0 {
            d += BASE as i64;
            borrow = 1;
        }
        out.push(u32::try_from(d).unwrap_or(0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn num(n: i128) -> Num {
        Num::from_int(&Int::from(n))
    }

    #[test]
    fn round_trips_long_integers() {
        let text = "-123456789012345678901234567890123456789000000000";
        let n = Num::from_int(&Int::parse(text).unwrap());
        assert_eq!(n.to_int().as_str(), text);
        assert_eq!(num(0).to_int().as_str(), "0");
        assert_eq!(num(1_000_000_000).to_int().as_str(), "1000000000");
    }

    proptest! {
        #[test]
        fn arithmetic_agrees_with_i128(a in -(1i128 << 100)..(1i128 << 100), b in -(1i128 << 100)..(1i128 << 100)) {
            prop_assert_eq!(num(a).add(&num(b)), num(a + b));
            prop_assert_eq!(num(a).sub(&num(b)), num(a - b));
            prop_assert_eq!(num(a).half(), num(a / 2));
            prop_assert_eq!(num(a).cmp_abs(&num(b)), a.unsigned_abs().cmp(&b.unsigned_abs()));
            prop_assert_eq!(num(a).negated(), num(-a));
        }
    }
}
