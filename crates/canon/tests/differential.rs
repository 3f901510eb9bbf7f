//! Differential test against the Python reference of SPEC §3 (`scripts/canon_reference.py`):
//! thousands of generated documents, canonicalised by this crate and by Python in one batch
//! (one document per line in, one result per line out), compared byte for byte.

mod docgen;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use docgen::{Style, doc, render};
use freezegate_canon::{Canonicalization, canonicalize};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

const DOCUMENTS: usize = 3000;

/// Hand-written lines around the edges: both sides must accept or refuse them alike.
const EDGES: &[&str] = &[
    "[1e16, 1e15, 9999999999999999.0, 1e-4, 1e-5, 0.0001, 0.00009999999999999999]",
    "[1.7976931348623157e308, 1.7976931348623158e308, -1.7976931348623157e308]",
    "[1.7976931348623159e308]",
    "[1e309]",
    "[-1e400]",
    "[5e-324, 2.4703282292062328e-324, 2.4703282292062327e-324, 1e-400, -1e-400]",
    "[2.2250738585072011e-308, 2.2250738585072014e-308, 4.9406564584124654e-324]",
    "[0.1, 0.2, 0.30000000000000004, 1.1, 100.0, 1E2, 0.1e1, 1.000, -0, -0.0]",
    "[123456789012345678901234567890, -98765432109876543210987654321098765432109876543210]",
    r#"{"\u007f": "\u2028\u2029", "\u0000": "\u001f", "\ud83d\ude00": "\ud834\udd1e"}"#,
    r#"{"\ud800\udc00": 1, "\uffff": 2, "\uff21": 3, "\u00e9": 4, "z": 5}"#,
    r#"{"abcdefghZ": 1, "abcdefghAA": 2, "abc\u0000": 3, "abc": 4, "abcdefgh": 5}"#,
    r#"{"abcdefghzaaaa": 0, "abcdefghaaaa": 1, "abcdefghzzzaaa": 2, "abcdefghzzaaa": 3, "abcdefghzaaa": 4, "abcdefghaaa": 5, "abcdefghzzzaa": 6, "abcdefghzzaa": 7, "abcdefghzaa": 8, "abcdefghaa": 9, "abcdefghzzza": 10, "abcdefghzza": 11, "abcdefghza": 12, "abcdefgha": 13, "abcdefghzzz": 14, "abcdefghzz": 15, "abcdefghz": 16, "abcdefgh": 17}"#,
    r#"["\u212b", "\u2126", "A\u030a", "\u1e9b\u0323", "\ud834\udd5e", "\uac00\u11a8"]"#,
    "\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"",
    "  [ ]  ",
    "{}",
    "null",
    "true",
    "0",
    "-0",
    "\"\"",
];

fn reference() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/canon_reference.py")
}

/// Runs the Python reference once over `lines` and returns its output lines.
fn python(lines: &[String]) -> Vec<Vec<u8>> {
    let mut child = Command::new("python3")
        .arg(reference())
        .arg("--lines")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 runs (SPEC: python3 is on every machine)");
    let mut stdin = child.stdin.take().unwrap();
    let input: Vec<u8> = lines
        .iter()
        .flat_map(|l| [l.as_bytes(), b"\n"].concat())
        .collect();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "the reference failed: {:?}",
        out.status
    );
    let mut results: Vec<Vec<u8>> = out
        .stdout
        .split(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    assert_eq!(
        results.pop(),
        Some(Vec::new()),
        "output ends with a newline"
    );
    results
}

#[test]
fn canonical_bytes_match_the_python_reference_byte_for_byte() {
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let strategy = doc();
    let mut lines: Vec<String> = EDGES.iter().map(|s| (*s).to_owned()).collect();
    for seed in 0..DOCUMENTS as u64 {
        let d = strategy.new_tree(&mut runner).unwrap().current();
        let style = Style {
            seed,
            shuffle: true,
            newlines: false,
        };
        lines.push(render(&d, style));
    }
    let expected = python(&lines);
    assert_eq!(expected.len(), lines.len());

    let mut mismatches = Vec::new();
    let mut refused = 0;
    for (line, want) in lines.iter().zip(&expected) {
        let got = canonicalize(line.as_bytes(), Canonicalization::V1);
        let agree = match &got {
            Ok(c) => c.bytes() == want.as_slice(),
            Err(_) => {
                refused += 1;
                want.starts_with(b"ERROR ")
            }
        };
        if !agree {
            mismatches.push(format!(
                "input:  {line}\nrust:   {:?}\npython: {}",
                got.map(|c| c.as_str().to_owned()),
                String::from_utf8_lossy(want)
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} documents differ from the reference:\n{}",
        mismatches.len(),
        lines.len(),
        mismatches[..mismatches.len().min(5)].join("\n\n")
    );
    // The refusals are exactly the overflowing edge lines: the generator makes valid text.
    assert_eq!(refused, 3);
}

/// Literals whose digits make up for an exponent of six digits or more (`core`'s parser stops
/// reading an exponent's digits once it passes 65 535): `1` and 700 000 zeros `e-700000` is
/// 1.0, as Python reads it, not infinity; and exponents of any length, leading zeros
/// included.
#[test]
fn literals_with_huge_exponents_that_their_digits_make_up_for_match_python() {
    let mut lines = Vec::new();
    for zeros in [65_536usize, 655_360, 700_000] {
        let z = "0".repeat(zeros);
        for d in [-2i64, 0, 3] {
            let k = i64::try_from(zeros).unwrap() + d;
            lines.push(format!("[1{z}e-{k}]"));
            lines.push(format!("[-0.{z}123e+{k}]"));
            lines.push(format!("[12.5{z}E-000{k}]"));
            lines.push(format!("[0.{z}e{k}]"));
        }
    }
    for exp in [
        "99999999999999999999999",
        "00000000000000000000000000001",
        "65536",
    ] {
        lines.push(format!("[123.456e-{exp},7e{exp},-0.0e{exp}]"));
    }
    let expected = python(&lines);
    assert_eq!(expected.len(), lines.len());
    for (line, want) in lines.iter().zip(&expected) {
        let got = canonicalize(line.as_bytes(), Canonicalization::V1);
        let agree = match &got {
            Ok(c) => c.bytes() == want.as_slice(),
            Err(_) => want.starts_with(b"ERROR "),
        };
        assert!(
            agree,
            "input of {} bytes starting {:?}\nrust:   {:?}\npython: {}",
            line.len(),
            &line[..line.len().min(40)],
            got.map(|c| c.as_str().to_owned()),
            String::from_utf8_lossy(want)
        );
    }
}

#[test]
fn float_repr_matches_python_for_many_floats() {
    // Random bit patterns (all exponents, subnormals included) and binary fractions whose
    // decimal value is a tie between two shortest candidates.
    let mut rng = <rand_pcg::Pcg64 as rand_core::SeedableRng>::seed_from_u64(11);
    let mut lines = Vec::new();
    while lines.len() < 40_000 {
        let x = f64::from_bits(rand_core::RngCore::next_u64(&mut rng));
        if x.is_finite() {
            lines.push(format!("[{x:e}]"));
        }
    }
    for i in 0..20_000u64 {
        let m = (1u64 << 45) + rand_core::RngCore::next_u64(&mut rng) % (1u64 << 53);
        let x = m as f64 / f64::from(1u32 << (1 + i % 10));
        lines.push(format!("[{x:?},{}]", -x));
    }
    // Plain decimals such as `12.50`, `-0.00120` and `100000.0`, which take a fast path
    // when they have at most 15 significant digits.
    for i in 0..20_000u64 {
        let r = rand_core::RngCore::next_u64(&mut rng);
        let int_len = (r % 19) as usize;
        let lead = (r >> 8) % 6;
        let frac_len = 1 + ((r >> 16) % 18) as usize;
        let digits = format!("{:020}{:020}", rand_core::RngCore::next_u64(&mut rng), r);
        let int = if int_len == 0 {
            "0".to_owned()
        } else {
            format!("{}{}", 1 + r % 9, &digits[..int_len - 1])
        };
        let zeros = "0".repeat(lead as usize);
        let frac = &digits[20..20 + frac_len];
        let sign = if i % 3 == 0 { "-" } else { "" };
        lines.push(format!(
            "[{sign}{int}.{zeros}{frac},{sign}{int}.{frac}000,{sign}{int}.0]"
        ));
    }
    // Literals with an exponent (`25e-3`, `1.50E+200`, `7e-0310`), which take the same fast
    // path when they have at most 15 significant digits and a decimal exponent within
    // -300..300, and the full path otherwise (subnormals and zero included).
    for i in 0..20_000u64 {
        let r = rand_core::RngCore::next_u64(&mut rng);
        let digits = format!("{:020}", rand_core::RngCore::next_u64(&mut rng));
        let int_len = 1 + (r % 17) as usize;
        let int = match r >> 6 & 3 {
            0 => "0".to_owned(),
            _ => format!("{}{}", 1 + r % 9, &digits[..int_len - 1]),
        };
        let frac = match r >> 9 & 3 {
            0 => String::new(),
            1 => format!(".{}", &digits[..1 + (r >> 12) as usize % 4]),
            2 => format!(".000{}", &digits[..1 + (r >> 12) as usize % 12]),
            _ => format!(".{}00", &digits[..1 + (r >> 12) as usize % 16]),
        };
        let magnitude = (r >> 20) % 330;
        let exp = match r >> 30 & 3 {
            0 => format!("e{magnitude}"),
            1 => format!("E+{magnitude:03}"),
            2 => format!("e-{magnitude}"),
            _ => format!("E-0{magnitude}"),
        };
        // Keep clear of overflow, which both sides refuse (the edge lines test that).
        let exp = if (r >> 30 & 3) < 2 && magnitude + int_len as u64 > 300 {
            "e1".to_owned()
        } else {
            exp
        };
        let sign = if i % 3 == 0 { "-" } else { "" };
        lines.push(format!("[{sign}{int}{frac}{exp}]"));
    }
    let expected = python(&lines);
    let mut mismatches = Vec::new();
    for (line, want) in lines.iter().zip(&expected) {
        let got = canonicalize(line.as_bytes(), Canonicalization::V1).unwrap();
        if got.bytes() != want.as_slice() {
            mismatches.push(format!(
                "{line}: rust {} python {}",
                got.as_str(),
                String::from_utf8_lossy(want)
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} differ:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(10)].join("\n")
    );
}
