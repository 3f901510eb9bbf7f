//! The policy values validation and `freeze` judge by.

use std::collections::BTreeMap;

use freezegate_canon::PropertyId;

use crate::row::EnvClass;

/// Policy values from `freezegate.toml` (SPEC §9); [`Policy::default`] is the SPEC default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// The replay count N of today's policy.
    pub replays: usize,
    /// Env classes whose replays may justify a freeze.
    pub freeze_env_classes: Vec<EnvClass>,
    /// The longest a row may live, in days after `created_at`.
    pub max_freeze_days: u32,
    /// Properties that raise their own replay count above `replays` (SPEC §6).
    pub property_replays: BTreeMap<PropertyId, usize>,
}

impl Default for Policy {
    /// 7 replays, `remote` only, 14 days.
    fn default() -> Policy {
        Policy {
            replays: 7,
            freeze_env_classes: vec![EnvClass::Remote],
            max_freeze_days: 14,
            property_replays: BTreeMap::new(),
        }
    }
}

impl Policy {
    /// The replay count N of `property`: its own where it raised it, else `replays`.
    pub fn replays_for(&self, property: &PropertyId) -> usize {
        self.property_replays
            .get(property)
            .copied()
            .unwrap_or(self.replays)
    }

    /// The allowed env classes as text (`remote`, `local, remote`, or `none`).
    pub fn classes_text(&self) -> String {
        if self.freeze_env_classes.is_empty() {
            return "none".to_owned();
        }
        let names: Vec<&str> = self.freeze_env_classes.iter().map(|c| c.as_str()).collect();
        names.join(", ")
    }
}
