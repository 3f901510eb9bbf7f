//! What a patch changed between the base revision and the working tree: the freeze ledger's
//! rows and `freezegate.toml`'s settings, for the report of `gate --base`.

use freezegate_ledger::{Ledger, Row};

use crate::config::{Config, Property};
use crate::report::{LedgerChange, SettingChange};

fn change(kind: &str, row: &Row, fields: Vec<String>) -> LedgerChange {
    LedgerChange {
        change: kind.to_owned(),
        property_id: row.property_id.to_string(),
        fixture_id: row.fixture_id.to_string(),
        seed: row.seed.to_string(),
        env_class: row.env_class.as_str().to_owned(),
        owner: row.owner.clone(),
        expires_at: row.expires_at.to_string(),
        fields,
    }
}

/// The rows added, removed and changed from `base` to `head`, by key, in key order.
pub fn ledger_diff(base: &Ledger, head: &Ledger) -> Vec<LedgerChange> {
    let diff = base.diff(head);
    let mut out: Vec<LedgerChange> = Vec::new();
    out.extend(diff.added.iter().map(|r| change("added", r, Vec::new())));
    out.extend(
        diff.removed
            .iter()
            .map(|r| change("removed", r, Vec::new())),
    );
    for (old, new) in &diff.changed {
        let (a, b) = (old.to_value(), new.to_value());
        let fields = match (a, b) {
            (freezegate_canon::Value::Object(a), freezegate_canon::Value::Object(b)) => a
                .iter()
                .zip(b.iter())
                .filter(|(x, y)| x != y)
                .map(|(x, _)| x.0.clone())
                .collect(),
            _ => Vec::new(),
        };
        out.push(change("changed", new, fields));
    }
    out.sort_by(|x, y| {
        (
            &x.property_id,
            &x.fixture_id,
            &x.seed,
            &x.env_class,
            &x.change,
        )
            .cmp(&(
                &y.property_id,
                &y.fixture_id,
                &y.seed,
                &y.env_class,
                &y.change,
            ))
    });
    out
}

/// A ledger read leniently for a diff: the rows that parse (a broken ledger's problems are
/// reported by validation, not here).
pub fn lenient_ledger(bytes: Option<&[u8]>) -> Ledger {
    bytes
        .and_then(|b| Ledger::from_slice(b).ok())
        .unwrap_or_default()
}

fn setting(
    key: String,
    base: Option<String>,
    head: Option<String>,
    weakens: bool,
) -> SettingChange {
    SettingChange {
        key,
        base,
        head,
        weakens,
    }
}

/// Appends the change of a numeric setting, if its value changed; `weakens` says whether
/// the new value weakens the policy.
fn push_number(out: &mut Vec<SettingChange>, key: String, old: u64, new: u64, weakens: bool) {
    if old != new {
        out.push(setting(
            key,
            Some(old.to_string()),
            Some(new.to_string()),
            weakens,
        ));
    }
}

/// Settings that differ between `base` (the base revision's `freezegate.toml`, if any) and
/// `head`, policy first, then properties in `head`'s order, then removed properties.
pub fn settings_diff(base: Option<&Config>, head: &Config) -> Vec<SettingChange> {
    let mut out = Vec::new();
    let default = Config {
        path: head.path.clone(),
        policy: crate::config::Policy::default(),
        properties: Vec::new(),
    };
    let base = base.unwrap_or(&default);
    let (b, h) = (&base.policy, &head.policy);
    for (key, old, new, weakens) in [
        ("seed", b.seed, h.seed, true),
        (
            "replays",
            b.replays as u64,
            h.replays as u64,
            h.replays < b.replays,
        ),
        (
            "timeout_ms",
            b.timeout_ms,
            h.timeout_ms,
            h.timeout_ms > b.timeout_ms,
        ),
        (
            "min_cases",
            u64::from(b.min_cases),
            u64::from(h.min_cases),
            h.min_cases < b.min_cases,
        ),
        (
            "max_freeze_days",
            u64::from(b.max_freeze_days),
            u64::from(h.max_freeze_days),
            h.max_freeze_days > b.max_freeze_days,
        ),
    ] {
        push_number(&mut out, format!("policy.{key}"), old, new, weakens);
    }
    if b.freeze_env_classes != h.freeze_env_classes {
        let more = h
            .freeze_env_classes
            .iter()
            .any(|c| !b.freeze_env_classes.contains(c));
        out.push(setting(
            "policy.freeze_env_classes".into(),
            Some(b.freeze_env_classes.join(",")),
            Some(h.freeze_env_classes.join(",")),
            more,
        ));
    }
    for (key, old, new) in [
        ("protected", &b.protected, &h.protected),
        ("property_paths", &b.property_paths, &h.property_paths),
    ] {
        if old != new {
            let dropped = old.iter().any(|g| !new.contains(g));
            out.push(setting(
                format!("policy.{key}"),
                Some(old.join(",")),
                Some(new.join(",")),
                dropped,
            ));
        }
    }
    for p in &head.properties {
        let key = |field: &str| format!("property[{}].{field}", p.id);
        match base.property(p.id.as_str()) {
            None => out.push(setting(key("id"), None, Some(p.id.to_string()), false)),
            Some(old) => property_diff(old, p, &key, &mut out),
        }
    }
    for p in &base.properties {
        if head.property(p.id.as_str()).is_none() {
            out.push(setting(
                format!("property[{}].id", p.id),
                Some(p.id.to_string()),
                None,
                true,
            ));
        }
    }
    out
}

fn property_diff(
    old: &Property,
    new: &Property,
    key: &dyn Fn(&str) -> String,
    out: &mut Vec<SettingChange>,
) {
    for (field, a, b, weakens) in [
        (
            "cases",
            u64::from(old.cases),
            u64::from(new.cases),
            new.cases < old.cases,
        ),
        (
            "replays",
            old.replays as u64,
            new.replays as u64,
            new.replays < old.replays,
        ),
        (
            "timeout_ms",
            old.timeout_ms,
            new.timeout_ms,
            new.timeout_ms > old.timeout_ms,
        ),
    ] {
        push_number(out, key(field), a, b, weakens);
    }
    for (field, a, b) in [
        ("oracle", &old.oracle, &new.oracle),
        ("generate", &old.generate, &new.generate),
    ] {
        if a != b {
            out.push(setting(key(field), a.clone(), b.clone(), b.is_none()));
        }
    }
    if old.worker != new.worker {
        out.push(setting(
            key("worker"),
            Some(old.worker.to_string()),
            Some(new.worker.to_string()),
            false,
        ));
    }
    if old.canonicalization != new.canonicalization {
        out.push(setting(
            key("canonicalization"),
            Some(old.canonicalization.to_string()),
            Some(new.canonicalization.to_string()),
            true,
        ));
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn config(text: &str) -> Config {
        Config::parse(text, Path::new("freezegate.toml")).unwrap()
    }

    #[test]
    fn settings_diff_names_every_change_and_what_weakens() {
        let base = config(
            "[policy]\nseed = 1\nreplays = 7\n\n[[property]]\nid = \"a\"\noracle = \"x\"\ncases = 100\n\n[[property]]\nid = \"gone\"\noracle = \"y\"\n",
        );
        let head = config(
            "[policy]\nseed = 2\nreplays = 9\n\n[[property]]\nid = \"a\"\noracle = \"x\"\ncases = 60\ntimeout_ms = 20000\n\n[[property]]\nid = \"new\"\noracle = \"z\"\n",
        );
        let diff: Vec<String> = settings_diff(Some(&base), &head)
            .iter()
            .map(|c| {
                format!(
                    "{} {:?} -> {:?}{}",
                    c.key,
                    c.base,
                    c.head,
                    if c.weakens { " (weakens)" } else { "" }
                )
            })
            .collect();
        assert_eq!(
            diff,
            [
                "policy.seed Some(\"1\") -> Some(\"2\") (weakens)",
                "policy.replays Some(\"7\") -> Some(\"9\")",
                "property[a].cases Some(\"100\") -> Some(\"60\") (weakens)",
                "property[a].replays Some(\"7\") -> Some(\"9\")",
                "property[a].timeout_ms Some(\"10000\") -> Some(\"20000\") (weakens)",
                "property[new].id None -> Some(\"new\")",
                "property[gone].id Some(\"gone\") -> None (weakens)",
            ]
        );
        assert!(settings_diff(Some(&head), &head).is_empty());
    }

    #[test]
    fn each_numeric_policy_setting_weakens_in_one_direction_only() {
        // (key, a low value, a high value, whether going from low to high weakens)
        for (key, low, high, raising_weakens) in [
            ("replays", 5, 9, false),
            ("timeout_ms", 1000, 20000, true),
            ("min_cases", 10, 50, false),
            ("max_freeze_days", 7, 14, true),
        ] {
            let low = config(&format!("[policy]\n{key} = {low}\n"));
            let high = config(&format!("[policy]\n{key} = {high}\n"));
            for (base, head, weakens) in [
                (&low, &high, raising_weakens),
                (&high, &low, !raising_weakens),
            ] {
                let diff = settings_diff(Some(base), head);
                assert_eq!(diff.len(), 1, "{key}: {diff:?}");
                assert_eq!(diff[0].key, format!("policy.{key}"));
                assert_eq!(diff[0].weakens, weakens, "{key}: {diff:?}");
            }
        }
    }
}
