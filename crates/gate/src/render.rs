//! Renderers of the gate's [`Report`]: text for people, JSON for machines, JUnit XML and
//! GitHub workflow annotations for CI dashboards.

use std::fmt::Write as _;
use std::time::Duration;

use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};

use crate::report::{
    CampaignResult, CampaignStatus, Finding, FixtureResult, FixtureStatus, Outcome, Report,
    SettingsView,
};

/// Text styling: ANSI colour on a terminal, plain elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Whether to emit ANSI colour codes.
    pub color: bool,
}

impl Style {
    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn status(self, status: FixtureStatus) -> String {
        let code = match status {
            FixtureStatus::Pass => "32",
            FixtureStatus::Regression | FixtureStatus::Flicker => "1;31",
            FixtureStatus::Frozen => "36",
            FixtureStatus::Infra => "33",
        };
        self.paint(code, status.as_str())
    }
}

/// Text from oracles, the ledger or the environment, for a line of the text report: a
/// backslash, a control character (newline, carriage return, escape, C1 controls), a line or
/// paragraph separator or a bidirectional control is written in a visible, reversible form
/// (`\\`, `\n`, `\r`, `\t`, `\u{1b}`), so that no value can split a line, move the cursor
/// or send a terminal sequence into a CI log. Other text is unchanged.
pub fn escape_text(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    c == '\\'
        || c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{61c}'
        )
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// The settings block: printed first, so a reviewer sees the run's policy next to the patch.
pub fn settings_text(s: &SettingsView) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "freezegate gate");
    let _ = writeln!(
        out,
        "  seed {} · replays {} · jobs {} · env {} (runner {}) · now {}",
        s.seed,
        s.replays,
        s.jobs,
        escape_text(&s.env_class),
        escape_text(&s.runner_id),
        escape_text(&s.now)
    );
    let _ = writeln!(
        out,
        "  ledger: {} active {}, {} expired",
        s.ledger_active,
        if s.ledger_active == 1 { "row" } else { "rows" },
        s.ledger_expired
    );
    if s.overrides.is_empty() {
        let _ = writeln!(out, "  overrides: none");
    } else {
        let _ = writeln!(out, "  overrides:");
        for o in &s.overrides {
            let _ = writeln!(out, "    {}", escape_text(o));
        }
    }
    if let Some(runner) = &s.rust_runner {
        let _ = writeln!(out, "  rust runner: {}", escape_text(runner));
    }
    if !s.properties.is_empty() {
        let width = s.properties.iter().map(|p| p.id.len()).max().unwrap_or(0);
        let _ = writeln!(out, "  properties:");
        for p in &s.properties {
            let _ = writeln!(
                out,
                "    {:width$}  {:7}  cases {:>5}  timeout {:>6} ms  replays {}",
                p.id, p.oracle, p.cases, p.timeout_ms, p.replays
            );
        }
    }
    out
}

fn fixture_line(f: &FixtureResult, style: Style) -> String {
    let mut line = format!(
        "  {:10} {}/{}  {}",
        style.status(f.status),
        f.property_id,
        f.fixture_id,
        freezegate_replay::letters(&f.labels)
    );
    if let Some(freeze) = &f.freeze {
        let _ = write!(
            line,
            "  frozen by {} until {} ({})",
            escape_text(&freeze.owner),
            escape_text(&freeze.expires_at),
            escape_text(&freeze.reason)
        );
    }
    if let Some(sig) = &f.signature {
        let _ = write!(line, "  failure: {}", escape_text(sig));
    }
    if let Some(note) = &f.note {
        let _ = write!(line, "\n             {}", escape_text(note));
    }
    line
}

fn campaign_line(c: &CampaignResult, style: Style) -> String {
    let status = match c.status {
        CampaignStatus::Pass => style.paint("32", "pass"),
        CampaignStatus::Failure if c.blocks() => style.paint("1;31", "failure"),
        CampaignStatus::Failure if c.already_pinned => style.paint("33", "known"),
        CampaignStatus::Failure => style.paint("33", "dropped"),
        CampaignStatus::Infra => style.paint("33", "infra"),
        CampaignStatus::NoGenerator => "no generator".to_owned(),
    };
    let mut line = format!(
        "  {:10} {}  {}/{} cases",
        status, c.property_id, c.cases_run, c.cases
    );
    if let (Some(action), Some(id)) = (&c.action, &c.fixture_id) {
        let _ = write!(
            line,
            "  → {action} {id} {}",
            freezegate_replay::letters(&c.labels)
        );
        if let Some(min) = &c.minimal {
            let shown: String = min.chars().take(80).collect();
            let more = if min.chars().count() > 80 { "…" } else { "" };
            let _ = write!(line, "  minimal {}{more}", escape_text(&shown));
        }
        if let Some(sig) = &c.signature {
            let _ = write!(line, "  failure: {}", escape_text(sig));
        }
    }
    if let Some(note) = &c.note {
        let _ = write!(line, "\n             {}", escape_text(note));
    }
    if let Some(infra) = c
        .infra
        .as_ref()
        .filter(|_| c.status != CampaignStatus::Infra)
    {
        let _ = write!(
            line,
            "\n             {}: {}",
            style.paint("33", "infra"),
            escape_text(infra)
        );
    }
    line
}

/// `file:line:column` (as much of it as the finding knows), or `None` without a file.
fn place(f: &Finding) -> Option<String> {
    let file = f.file.as_deref()?;
    Some(match (f.line, f.column) {
        (Some(line), Some(column)) => format!("{file}:{line}:{column}"),
        (Some(line), None) => format!("{file}:{line}"),
        (None, _) => file.to_owned(),
    })
}

/// A finding's message after its place, `file:line:column: message`.
fn placed_message(f: &Finding) -> String {
    match place(f) {
        Some(at) => format!("{at}: {}", f.message),
        None => f.message.clone(),
    }
}

/// The body of the text report (everything after the settings block), ending with the
/// summary line.
pub fn body_text(report: &Report, style: Style) -> String {
    let mut out = String::new();
    if !report.findings.is_empty() {
        let _ = writeln!(out, "findings:");
        for f in &report.findings {
            let level = if f.blocking {
                style.paint("1;31", "error")
            } else {
                style.paint("33", "warning")
            };
            let _ = writeln!(
                out,
                "  {level} [{}] {}",
                escape_text(&f.rule),
                escape_text(&placed_message(f))
            );
        }
    }
    if !report.fixtures.is_empty() {
        let passing = report
            .fixtures
            .iter()
            .filter(|f| f.status == FixtureStatus::Pass && f.note.is_none())
            .count();
        let _ = writeln!(
            out,
            "fixtures ({} replayed, {passing} passing):",
            report.fixtures.len()
        );
        for f in report
            .fixtures
            .iter()
            .filter(|f| f.status != FixtureStatus::Pass || f.note.is_some())
        {
            let _ = writeln!(out, "{}", fixture_line(f, style));
        }
    }
    if !report.campaigns.is_empty() {
        let _ = writeln!(out, "campaigns:");
        for c in &report.campaigns {
            let _ = writeln!(out, "{}", campaign_line(c, style));
        }
    }
    if let Some(patch) = &report.patch {
        let _ = writeln!(
            out,
            "patch: {} commit{} of {}..HEAD judged",
            patch.commits,
            if patch.commits == 1 { "" } else { "s" },
            patch.base
        );
        if !patch.ledger_diff.is_empty() {
            let _ = writeln!(out, "  ledger diff:");
            for c in &patch.ledger_diff {
                let sign = match c.change.as_str() {
                    "added" => "+",
                    "removed" => "-",
                    _ => "~",
                };
                let fields = if c.fields.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", c.fields.join(", "))
                };
                let _ = writeln!(
                    out,
                    "    {sign} {}",
                    escape_text(&format!(
                        "{}/{} seed {} {} owner {} until {}{fields}",
                        c.property_id, c.fixture_id, c.seed, c.env_class, c.owner, c.expires_at
                    ))
                );
            }
        }
        if !patch.settings_diff.is_empty() {
            let _ = writeln!(out, "  settings diff:");
            for c in &patch.settings_diff {
                let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
                let _ = writeln!(
                    out,
                    "    {}: {} → {}{}",
                    escape_text(&c.key),
                    escape_text(&show(&c.base)),
                    escape_text(&show(&c.head)),
                    if c.weakens {
                        style.paint("33", " (weakens the policy)")
                    } else {
                        String::new()
                    }
                );
            }
        }
    }
    if !report.expired_rows.is_empty() {
        let _ = writeln!(out, "expired freeze rows (they excuse nothing):");
        for r in &report.expired_rows {
            let _ = writeln!(
                out,
                "  {}",
                escape_text(&format!(
                    "{}/{} ({}) owner {} expired {}",
                    r.property_id, r.fixture_id, r.env_class, r.owner, r.expires_at
                ))
            );
        }
    }
    let line = report.summary_line();
    let painted = match report.decision.outcome {
        Outcome::Pass => style.paint("1;32", &line),
        Outcome::Blocked => style.paint("1;31", &line),
        Outcome::Infra => style.paint("1;33", &line),
    };
    let _ = writeln!(out, "{painted}");
    out
}

/// The JSON report: the [`Report`] as pretty JSON plus a newline (schema:
/// `docs/gate-report.schema.json`).
pub fn json(report: &Report) -> String {
    let mut text = serde_json::to_string_pretty(report).unwrap_or_else(|e| {
        format!(
            "{{\"format\":\"{}\",\"error\":{:?}}}",
            report.format,
            e.to_string()
        )
    });
    text.push('\n');
    text
}

fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// Text for the JUnit document's element text (a failure's description): a character that
/// XML 1.0 forbids (U+FFFE, U+FFFF, C0 controls) or that `quick-junit` drops on the way in
/// (every control character but the line feed: tab, carriage return, escape with the terminal
/// sequence it starts, DEL, C1) is written visibly (`\t`, `\r`, `\u{1b}`), so that the
/// document is one every XML parser reads and no character is dropped unseen. A backslash
/// stays as it is, for readable paths and JSON: `\t` may also be those two characters (the
/// JSON report has the exact text).
fn xml(text: &str) -> String {
    junit_text(text, true)
}

/// [`xml`] for an attribute (a `message`, a name): a line feed is written `\n` too, since a
/// parser reads a raw line feed in an attribute as a space.
fn xml_attr(text: &str) -> String {
    junit_text(text, false)
}

fn junit_text(text: &str, line_feeds: bool) -> String {
    let keeps = |c: char| junit_keeps(c) && (line_feeds || c != '\n');
    if text.chars().all(keeps) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' if !line_feeds => out.push_str("\\n"),
            c if keeps(c) => out.push(c),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    out
}

/// Whether [`xml`] passes `c` through as it is.
fn junit_keeps(c: char) -> bool {
    c == '\n' || !(c.is_control() || c == '\u{fffe}' || c == '\u{ffff}')
}

/// Whether XML 1.0 allows `c` in a document (its `Char` production; a Rust `char` is never a
/// surrogate).
#[cfg(test)]
fn xml_char(c: char) -> bool {
    !matches!(
        c,
        '\0'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}'
    )
}

/// JUnit XML: one test case per fixture and per campaign (and per blocking finding);
/// frozen fixtures are skipped with the freeze's reason; infra items are errors.
pub fn junit(report: &Report) -> String {
    let mut junit = quick_junit::Report::new("freezegate");
    junit.set_time(ms(report.summary.duration_ms));

    let mut fixtures = TestSuite::new("fixtures");
    for f in &report.fixtures {
        let labels = freezegate_replay::letters(&f.labels);
        let status = match f.status {
            FixtureStatus::Pass => TestCaseStatus::success(),
            FixtureStatus::Regression | FixtureStatus::Flicker => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_type(f.status.as_str());
                s.set_message(format!(
                    "{}: {} ({labels})",
                    f.status.as_str(),
                    f.verdict.as_str()
                ));
                if let Some(d) = f.note.as_ref().or(f.signature.as_ref()) {
                    s.set_description(xml(d));
                }
                s
            }
            FixtureStatus::Frozen => {
                let mut s = TestCaseStatus::skipped();
                if let Some(freeze) = &f.freeze {
                    s.set_message(xml_attr(&format!(
                        "frozen (no vote) by {} until {}: {}",
                        freeze.owner, freeze.expires_at, freeze.reason
                    )));
                }
                s
            }
            FixtureStatus::Infra => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                s.set_type("infra");
                s.set_message(format!("infra queue ({labels})"));
                if let Some(note) = &f.note {
                    s.set_description(xml(note));
                }
                s
            }
        };
        let mut case = TestCase::new(xml_attr(&f.fixture_id), status);
        case.set_classname(xml_attr(&f.property_id));
        case.set_time(ms(f.duration_ms));
        fixtures.add_test_case(case);
    }
    junit.add_test_suite(fixtures);

    let mut campaigns = TestSuite::new("campaigns");
    for c in &report.campaigns {
        let status = match c.status {
            CampaignStatus::Pass => TestCaseStatus::success(),
            CampaignStatus::NoGenerator => {
                let mut s = TestCaseStatus::skipped();
                s.set_message("no generator: fixtures only");
                s
            }
            CampaignStatus::Failure if !c.blocks() => {
                let mut s = TestCaseStatus::skipped();
                s.set_message(c.note.as_deref().map_or_else(
                    || {
                        if c.already_pinned {
                            "the failure is an already pinned fixture".into()
                        } else {
                            "not reproduced".into()
                        }
                    },
                    xml_attr,
                ));
                s
            }
            CampaignStatus::Failure => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_type("new_failure");
                s.set_message(xml_attr(&new_failure_headline(c)));
                let details = new_failure_details(c);
                if !details.is_empty() {
                    s.set_description(xml(&details.join("\n")));
                }
                s
            }
            CampaignStatus::Infra => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                s.set_type("infra");
                s.set_message(
                    c.note
                        .as_deref()
                        .map_or_else(|| "infra queue".into(), xml_attr),
                );
                s
            }
        };
        let mut case = TestCase::new(xml_attr(&c.property_id), status);
        case.set_classname("campaign");
        case.set_time(ms(c.duration_ms));
        campaigns.add_test_case(case);
        // An infra item next to a failure is an error of its own, as it is an item of the
        // runner owners' queue of its own.
        if let Some(infra) = c
            .infra
            .as_ref()
            .filter(|_| c.status != CampaignStatus::Infra)
        {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
            s.set_type("infra");
            s.set_message(xml_attr(infra));
            let mut case = TestCase::new(xml_attr(&format!("{} (infra)", c.property_id)), s);
            case.set_classname("campaign");
            campaigns.add_test_case(case);
        }
    }
    junit.add_test_suite(campaigns);

    let blocking: Vec<_> = report.findings.iter().filter(|f| f.blocking).collect();
    if !blocking.is_empty() {
        let mut suite = TestSuite::new("findings");
        for (i, f) in blocking.iter().enumerate() {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_type(xml_attr(&f.rule));
            s.set_message(xml_attr(&f.message));
            // The failure's text leads with the place, for dashboards that show no file.
            s.set_description(xml(&placed_message(f)));
            let mut case = TestCase::new(xml_attr(&format!("{} #{i}", f.rule)), s);
            case.set_classname(f.file.as_deref().map_or_else(|| "gate".into(), xml_attr));
            suite.add_test_case(case);
        }
        junit.add_test_suite(suite);
    }
    junit
        .to_string()
        .unwrap_or_else(|e| format!("<!-- junit serialisation failed: {e} -->\n"))
}

/// A new failure in one line: the action, the fixture and its replays' labels
/// (`pin_fixture 87ba… (FFFFFFF)`).
fn new_failure_headline(c: &CampaignResult) -> String {
    format!(
        "{} {} ({})",
        c.action.as_deref().unwrap_or("failure"),
        c.fixture_id.as_deref().unwrap_or(""),
        freezegate_replay::letters(&c.labels)
    )
}

/// What a reader of a new failure needs besides its headline, one item each: the minimal
/// input, the failure signature, and the note (what to do).
fn new_failure_details(c: &CampaignResult) -> Vec<String> {
    let mut details: Vec<String> = c
        .minimal
        .iter()
        .map(|min| format!("minimal failing input: {min}"))
        .collect();
    if let Some(sig) = &c.signature {
        details.push(format!("failure: {sig}"));
    }
    if let Some(note) = &c.note {
        details.push(note.clone());
    }
    details
}

/// Escapes a value for a workflow command's message: first as [`escape_text`] does (so that
/// no control character, escape sequence, line or paragraph separator or bidirectional
/// control reaches the job log), then `%`, CR and LF as the workflow commands require.
fn gh_data(s: &str) -> String {
    escape_text(s)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property (also `:` and `,`).
fn gh_prop(s: &str) -> String {
    gh_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Where a GitHub annotation points.
#[derive(Clone, Copy)]
struct Place<'a> {
    file: Option<&'a str>,
    line: Option<u64>,
    column: Option<u64>,
}

impl<'a> Place<'a> {
    fn file(file: Option<&'a str>) -> Self {
        Place {
            file,
            line: None,
            column: None,
        }
    }
}

/// GitHub workflow commands: `::error` for what blocks, `::warning` for frozen fixtures,
/// infra items and warnings (an expired row is one: its `ledger.expired` finding, at its
/// place), ending with a `::notice` of the summary line.
pub fn github(report: &Report) -> String {
    let mut out = String::new();
    let mut annotate = |level: &str, place: Place<'_>, title: &str, message: &str| {
        let mut props = Vec::new();
        if let Some(file) = place.file {
            props.push(format!("file={}", gh_prop(file)));
            // A line or column without a file points nowhere; GitHub ignores it.
            if let Some(line) = place.line {
                props.push(format!("line={line}"));
                if let Some(column) = place.column {
                    props.push(format!("col={column}"));
                }
            }
        }
        props.push(format!("title={}", gh_prop(title)));
        let _ = writeln!(out, "::{level} {}::{}", props.join(","), gh_data(message));
    };
    for f in &report.findings {
        let level = if f.blocking { "error" } else { "warning" };
        annotate(
            level,
            Place {
                file: f.file.as_deref(),
                line: f.line,
                column: f.column,
            },
            &format!("freezegate {}", f.rule),
            &f.message,
        );
    }
    let mut emit = |level: &str, file: Option<&str>, title: &str, message: &str| {
        annotate(level, Place::file(file), title, message);
    };
    for f in &report.fixtures {
        let labels = freezegate_replay::letters(&f.labels);
        match f.status {
            FixtureStatus::Pass => {}
            FixtureStatus::Regression | FixtureStatus::Flicker => emit(
                "error",
                Some(&f.path),
                &format!("freezegate {}", f.status.as_str()),
                &format!(
                    "{} fixture {}: {} ({labels}){}",
                    f.property_id,
                    f.fixture_id,
                    f.verdict.as_str(),
                    f.note
                        .as_ref()
                        .map(|n| format!(" — {n}"))
                        .unwrap_or_default()
                ),
            ),
            FixtureStatus::Frozen => emit(
                "warning",
                Some(&f.path),
                "freezegate frozen (no vote)",
                &format!(
                    "{} fixture {} flickers ({labels}); frozen by {} until {}",
                    f.property_id,
                    f.fixture_id,
                    f.freeze.as_ref().map_or("?", |r| r.owner.as_str()),
                    f.freeze.as_ref().map_or("?", |r| r.expires_at.as_str())
                ),
            ),
            FixtureStatus::Infra => emit(
                "warning",
                Some(&f.path),
                "freezegate infra",
                &format!(
                    "{} fixture {}: infra queue ({labels}){}",
                    f.property_id,
                    f.fixture_id,
                    f.note
                        .as_ref()
                        .map(|n| format!(" — {n}"))
                        .unwrap_or_default()
                ),
            ),
        }
    }
    for c in &report.campaigns {
        let file = c
            .fixture_id
            .as_ref()
            .map(|id| format!("fixtures/{}/{id}.json", c.property_id));
        if c.blocks() {
            emit(
                "error",
                file.as_deref(),
                "freezegate new failure",
                &std::iter::once(format!("{}: {}", c.property_id, new_failure_headline(c)))
                    .chain(new_failure_details(c))
                    .collect::<Vec<_>>()
                    .join(" — "),
            );
        }
        if let Some(infra) = &c.infra {
            emit(
                "warning",
                None,
                "freezegate infra",
                &format!("{} campaign: {infra}", c.property_id),
            );
        }
    }
    // Infra items are warnings one by one; a run that only they left undecided fails its
    // check (exit 2), so one error says why and what to do.
    if report.decision.outcome == Outcome::Infra {
        emit(
            "error",
            None,
            "freezegate infra only",
            &format!(
                "nothing blocks, but {}: timeouts and harness errors decide nothing about the patch; they are the runner owners' to fix (--infra-out queues them): re-run the job, on another runner if they repeat",
                match report.summary.infra {
                    1 => "an infra item left the run undecided".to_owned(),
                    n => format!("{n} infra items left the run undecided"),
                }
            ),
        );
    }
    // Expired rows are annotated once, by their `ledger.expired` finding above (which
    // points at the row's `expires_at`).
    emit("notice", None, "freezegate", &report.summary_line());
    out
}

/// Text for markdown prose or a table cell: [`escape_text`] first (so a newline cannot end
/// the line, the list item or the table row), then the markdown that could change what the
/// text shows (`` ` ``, `*`, `[`, `]`, `|`, `\\` by a backslash; `<`, `>`, `&` as
/// entities), so a value cannot open a code span, emphasis, a link, a table cell or HTML.
fn md_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in escape_text(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '~' | '[' | ']' | '|' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A markdown code span of `text` (after [`escape_text`]): fenced by one backtick more than
/// the longest run of backticks inside, padded where the text starts or ends with one.
fn md_code(text: &str) -> String {
    let text = escape_text(text);
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// The markdown summary written to `$GITHUB_STEP_SUMMARY`. Values from oracles, the ledger
/// and the environment are escaped: a newline, a backtick, `<`, `>` or `&` in a message,
/// an owner or a minimal input stays text.
pub fn github_step_summary(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## freezegate\n\n**{}**\n",
        md_text(&report.summary_line())
    );
    let rows: Vec<&FixtureResult> = report
        .fixtures
        .iter()
        .filter(|f| f.status != FixtureStatus::Pass || f.note.is_some())
        .collect();
    if !rows.is_empty() {
        let _ = writeln!(out, "| status | property | fixture | replays | note |");
        let _ = writeln!(out, "|---|---|---|---|---|");
        for f in rows {
            let note = match (&f.freeze, &f.note) {
                (_, Some(n)) => md_text(n),
                (Some(r), None) => format!(
                    "frozen by {} until {}",
                    md_text(&r.owner),
                    md_text(&r.expires_at)
                ),
                (None, None) => String::new(),
            };
            // In a table a `|` ends the cell, also in a code span: GitHub reads `\|` as `|`.
            let cell = |text: &str| md_code(text).replace('|', "\\|");
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {note} |",
                f.status.as_str(),
                cell(&f.property_id),
                cell(&f.fixture_id),
                cell(&freezegate_replay::letters(&f.labels)),
            );
        }
        let _ = writeln!(out);
    }
    for c in report.campaigns.iter().filter(|c| c.blocks()) {
        let _ = write!(
            out,
            "- new failure of {}: {} {} ({}), minimal input {}",
            md_code(&c.property_id),
            md_text(c.action.as_deref().unwrap_or("failure")),
            md_code(c.fixture_id.as_deref().unwrap_or("")),
            md_text(&freezegate_replay::letters(&c.labels)),
            md_code(c.minimal.as_deref().unwrap_or("?"))
        );
        if let Some(sig) = &c.signature {
            let _ = write!(out, ", failure: {}", md_text(sig));
        }
        if let Some(note) = &c.note {
            let _ = write!(out, " — {}", md_text(note));
        }
        let _ = writeln!(out);
    }
    for c in report.campaigns.iter().filter(|c| c.infra.is_some()) {
        let _ = writeln!(
            out,
            "- infra, campaign of {}: {}",
            md_code(&c.property_id),
            md_text(c.infra.as_deref().unwrap_or(""))
        );
    }
    for f in report.findings.iter().filter(|f| f.blocking) {
        let _ = match place(f) {
            Some(at) => writeln!(
                out,
                "- {} at {}: {}",
                md_text(&f.rule),
                md_code(&at),
                md_text(&f.message)
            ),
            None => writeln!(out, "- {}: {}", md_text(&f.rule), md_text(&f.message)),
        };
    }
    out
}

/// The `schema` of each line [`infra_lines`] writes.
pub const INFRA_LINE_SCHEMA: &str = "freezegate-infra-item-v1";

/// One line of the runner owners' queue; keys in field order.
#[derive(serde::Serialize)]
struct InfraLine<'a> {
    schema: &'static str,
    kind: &'static str,
    property_id: &'a str,
    fixture_id: Option<&'a str>,
    seed: u64,
    env_class: &'a str,
    runner_id: &'a str,
    patch_id: &'a str,
    at: &'a str,
    labels: &'a [freezegate_replay::Label],
    note: Option<&'a str>,
}

/// Infra items as JSON lines (one object per line, `\n`-terminated), for the runner owners'
/// queue, which `--infra-out` appends to across runs. Each line holds these keys in this
/// order:
///
/// `{"schema","kind","property_id","fixture_id","seed","env_class","runner_id","patch_id","at","labels","note"}`
///
/// `schema` is [`INFRA_LINE_SCHEMA`]; `kind` is `fixture` (a pinned fixture's replay timed
/// out or broke) or `campaign` (a campaign case, its generator, or the replays of a failing
/// case did); `fixture_id` is the fixture's id, or for a campaign the would-be fixture's id
/// when the replays of its minimal input were the infra runs, else `null`; `seed` is the
/// run's seed; `env_class` and `runner_id` name where it ran; `patch_id` is the candidate
/// the run judged; `at` is the run's `now` (RFC 3339, UTC); `labels` are the replays' labels
/// (a fixture's, or a campaign's when its status is `infra`; else empty); `note` is why, in
/// one line. Fixtures come first, sorted by property and id, then campaigns in file order.
pub fn infra_lines(report: &Report) -> String {
    let s = &report.settings;
    let mut out = String::new();
    let mut push = |kind: &'static str,
                    property_id: &str,
                    fixture_id: Option<&str>,
                    labels: &[freezegate_replay::Label],
                    note: Option<&str>| {
        let line = InfraLine {
            schema: INFRA_LINE_SCHEMA,
            kind,
            property_id,
            fixture_id,
            seed: s.seed,
            env_class: &s.env_class,
            runner_id: &s.runner_id,
            patch_id: &s.patch_id,
            at: &s.now,
            labels,
            note,
        };
        if let Ok(text) = serde_json::to_string(&line) {
            out.push_str(&text);
            out.push('\n');
        }
    };
    for f in report
        .fixtures
        .iter()
        .filter(|f| f.status == FixtureStatus::Infra)
    {
        push(
            "fixture",
            &f.property_id,
            Some(&f.fixture_id),
            &f.labels,
            f.note.as_deref(),
        );
    }
    for c in &report.campaigns {
        let Some(infra) = &c.infra else { continue };
        let own = c.status == CampaignStatus::Infra;
        push(
            "campaign",
            &c.property_id,
            c.fixture_id.as_deref().filter(|_| own),
            if own { &c.labels } else { &[] },
            Some(infra),
        );
    }
    out
}

/// The `format` of the document a machine format gets when the gate cannot run at all (exit
/// 3: a broken `freezegate.toml`, a ledger that is not JSON, an unknown `--base`), so that a
/// dashboard shows the error instead of an empty report.
pub const ERROR_FORMAT: &str = "freezegate-gate-error-v1";

/// The file, line and column an error that stopped the gate names, when it names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorPlace {
    /// The file, relative to the root as the error names it.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// 1-based column, when known.
    pub column: Option<u64>,
}

/// The place named by `error` or one of its sources: a `freezegate.toml` that does not parse
/// or breaks a rule (the base revision's too, with `--base`), or a ledger that is not JSON.
pub fn error_place(error: &(dyn std::error::Error + 'static)) -> Option<ErrorPlace> {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if let Some(config) = e.downcast_ref::<crate::config::ConfigError>() {
            return Some(config_place(config));
        }
        // A glob of the base revision's policy that its parse let through (a policy built
        // in code): the file, without a place in it.
        if let Some(crate::patch::PatchError::Glob { .. }) = e.downcast_ref() {
            return Some(ErrorPlace {
                file: crate::config::CONFIG_FILE.to_owned(),
                line: None,
                column: None,
            });
        }
        #[cfg(target_os = "linux")]
        if let Some(place) = gate_error_place(e) {
            return Some(place);
        }
        cause = e.source();
    }
    None
}

/// The place a configuration error names.
fn config_place(config: &crate::config::ConfigError) -> ErrorPlace {
    use crate::config::ConfigError;
    match config {
        ConfigError::Io { path, .. } => ErrorPlace {
            file: path.display().to_string(),
            line: None,
            column: None,
        },
        ConfigError::Syntax {
            path, line, column, ..
        } => ErrorPlace {
            file: path.display().to_string(),
            line: Some(*line as u64),
            column: Some(*column as u64),
        },
        ConfigError::Rule { path, at, .. } => ErrorPlace {
            file: path.display().to_string(),
            line: at.map(|p| p.line as u64),
            column: at.map(|p| p.column as u64),
        },
    }
}

/// The place of a gate's error that names a file, if `e` is one: a ledger that is not JSON
/// (with its line and column), a file that cannot be read (the ledger a folder, say), an
/// `allowed_signers` file that does not parse (with the entry's line and column).
#[cfg(target_os = "linux")]
fn gate_error_place(e: &(dyn std::error::Error + 'static)) -> Option<ErrorPlace> {
    // `RunError::Gate` is transparent: its source skips the `GateError` it wraps.
    let gate = e.downcast_ref::<crate::run::GateError>().or_else(|| {
        match e.downcast_ref::<crate::run::RunError>() {
            Some(crate::run::RunError::Gate(gate)) => Some(gate),
            _ => None,
        }
    });
    match gate {
        Some(crate::run::GateError::Config(config)) => Some(config_place(config)),
        Some(crate::run::GateError::LedgerSyntax { path, source }) => Some(ErrorPlace {
            file: path.clone(),
            line: Some(source.line as u64),
            column: Some(source.column as u64),
        }),
        Some(crate::run::GateError::Io { path, .. }) => Some(ErrorPlace {
            file: path.clone(),
            line: None,
            column: None,
        }),
        Some(crate::run::GateError::Signers { path, source }) => {
            let (line, column) = match source {
                freezegate_ledger::Error::Signers { line, column, .. } => {
                    (Some(*line as u64), Some(*column as u64))
                }
                _ => (None, None),
            };
            Some(ErrorPlace {
                file: path.clone(),
                line,
                column,
            })
        }
        _ => None,
    }
}

/// The error document of `--format json`, keys in field order (schema:
/// `docs/gate-error.schema.json`).
#[derive(serde::Serialize)]
struct ErrorDocument<'a> {
    format: &'static str,
    exit_code: u8,
    error: &'a str,
    file: Option<&'a str>,
    line: Option<u64>,
    column: Option<u64>,
}

/// The error document of `--format json`: `{"format": "freezegate-gate-error-v1",
/// "exit_code": 3, "error", "file", "line", "column"}`, keys in this order (`file`, `line`
/// and `column` are `null` when the error names no place); its JSON Schema is
/// `docs/gate-error.schema.json`.
pub fn error_json(message: &str, place: Option<&ErrorPlace>) -> String {
    let document = ErrorDocument {
        format: ERROR_FORMAT,
        exit_code: crate::report::exit::USAGE,
        error: message,
        file: place.map(|p| p.file.as_str()),
        line: place.and_then(|p| p.line),
        column: place.and_then(|p| p.column),
    };
    let mut text = serde_json::to_string_pretty(&document)
        .unwrap_or_else(|_| format!("{{\"format\":\"{ERROR_FORMAT}\",\"exit_code\":3}}"));
    text.push('\n');
    text
}

/// The error document of `--format junit`: one suite, `gate`, with one test case,
/// `configuration`, in error, whose text starts with the place.
pub fn error_junit(message: &str, place: Option<&ErrorPlace>) -> String {
    let mut junit = quick_junit::Report::new("freezegate");
    let mut suite = TestSuite::new("gate");
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
    status.set_type("configuration");
    status.set_message(xml_attr(message));
    if let Some(p) = place {
        status.set_description(xml(&error_place_text(p)));
    }
    suite.add_test_case(TestCase::new("configuration", status));
    junit.add_test_suite(suite);
    junit
        .to_string()
        .unwrap_or_else(|e| format!("<!-- junit serialisation failed: {e} -->\n"))
}

/// The error document of `--format github`: one `::error` annotation at the place.
pub fn error_github(message: &str, place: Option<&ErrorPlace>) -> String {
    let mut props = Vec::new();
    if let Some(p) = place {
        props.push(format!("file={}", gh_prop(&p.file)));
        if let Some(line) = p.line {
            props.push(format!("line={line}"));
            if let Some(column) = p.column {
                props.push(format!("col={column}"));
            }
        }
    }
    props.push(format!(
        "title={}",
        gh_prop("freezegate: the gate cannot run")
    ));
    format!("::error {}::{}\n", props.join(","), gh_data(message))
}

/// The markdown that `--format github` appends to `$GITHUB_STEP_SUMMARY` when the gate cannot
/// run (exit 3): the sentence and its place, escaped as [`github_step_summary`] escapes, so
/// that the job's summary says why the check failed.
pub fn error_step_summary(message: &str, place: Option<&ErrorPlace>) -> String {
    let mut out = String::from("## freezegate\n\n**the gate cannot run (exit 3)**\n\n");
    match place {
        Some(p) => {
            let _ = writeln!(
                out,
                "{}: {}",
                md_code(&error_place_text(p)),
                md_text(message)
            );
        }
        None => {
            let _ = writeln!(out, "{}", md_text(message));
        }
    }
    out
}

fn error_place_text(p: &ErrorPlace) -> String {
    match (p.line, p.column) {
        (Some(line), Some(column)) => format!("{}:{line}:{column}", p.file),
        (Some(line), None) => format!("{}:{line}", p.file),
        _ => p.file.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Decision, FreezeInfo, Summary};
    use freezegate_replay::{Label, Verdict};
    use proptest::prelude::*;

    /// Undoes [`escape_text`].
    fn unescape(text: &str) -> Option<String> {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next()? {
                '\\' => out.push('\\'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                'u' => {
                    if chars.next()? != '{' {
                        return None;
                    }
                    let hex: String = chars.by_ref().take_while(|c| *c != '}').collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                _ => return None,
            }
        }
        Some(out)
    }

    fn hostile() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                any::<char>(),
                Just('\n'),
                Just('\r'),
                Just('\u{1b}'),
                Just('\\'),
                Just('`'),
                Just('<'),
                Just('|'),
                Just('&'),
                Just('\u{202e}'),
            ],
            0..40,
        )
        .prop_map(|chars| chars.into_iter().collect())
    }

    proptest! {
        #[test]
        fn escaped_text_is_one_visible_line_and_reads_back(text in hostile()) {
            let escaped = escape_text(&text);
            prop_assert!(!escaped.chars().any(|c| c.is_control() || needs_escape(c) && c != '\\'));
            prop_assert_eq!(unescape(&escaped), Some(text.clone()));
            if !text.chars().any(needs_escape) {
                prop_assert_eq!(escaped.as_ref(), text.as_str());
            }
        }

        #[test]
        fn markdown_text_opens_nothing(text in hostile()) {
            let md = md_text(&text);
            prop_assert!(!md.chars().any(|c| c.is_control() || c == '<' || c == '>'));
            // Every markdown character is escaped: after removing escape pairs none is left.
            let mut rest = String::new();
            let mut chars = md.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    chars.next();
                } else {
                    rest.push(c);
                }
            }
            prop_assert!(!rest.contains(['`', '|', '*', '_', '~', '[', ']']), "{}", md);
            prop_assert!(rest.split('&').skip(1).all(|s| ["amp;", "lt;", "gt;"].iter().any(|e| s.starts_with(e))), "{}", md);
        }

        #[test]
        fn a_markdown_code_span_holds_its_text(text in hostile()) {
            let code = md_code(&text);
            prop_assert!(!code.chars().any(char::is_control));
            let inner = escape_text(&text);
            let fence_len = code.chars().take_while(|c| *c == '`').count();
            // No run of backticks inside is as long as the fence.
            prop_assert!(!inner.contains(&"`".repeat(fence_len)), "{}", code);
            prop_assert!(code.ends_with(&"`".repeat(fence_len)));
        }
    }

    /// Once its durations are cleared, a report renders as one that took no time, in every
    /// format: what snapshot tests of the renderings rely on.
    #[test]
    fn a_report_with_cleared_durations_renders_like_one_that_took_no_time() {
        let untimed = hostile_report();
        let mut timed = hostile_report();
        timed.summary.duration_ms = 4_137;
        timed.fixtures.iter_mut().for_each(|f| f.duration_ms = 812);
        timed.campaigns.iter_mut().for_each(|c| c.duration_ms = 95);
        let renders = |r: &Report| {
            [
                body_text(r, Style { color: false }),
                json(r),
                junit(r),
                github(r),
                github_step_summary(r),
            ]
        };
        assert_ne!(renders(&timed), renders(&untimed));
        timed.clear_durations();
        assert_eq!(timed, untimed);
        assert_eq!(renders(&timed), renders(&untimed));
    }

    /// A report whose every free-text field holds a newline, a carriage return, an escape
    /// sequence and markdown.
    fn hostile_report() -> Report {
        let nasty = "line one\nline two\r\u{1b}[31mred\u{1}`code` <b>&amp;</b> | x";
        let mut report = Report {
            format: crate::report::REPORT_FORMAT,
            settings: SettingsView {
                seed: 1,
                replays: 3,
                jobs: 2,
                env_class: "remote".into(),
                runner_id: "ci\n-7".into(),
                now: "2026-12-01T12:00:00Z".into(),
                patch_id: "p".into(),
                properties: Vec::new(),
                overrides: Vec::new(),
                ledger_active: 1,
                ledger_expired: 0,
                rust_runner: None,
            },
            fixtures: vec![
                FixtureResult {
                    property_id: "p".into(),
                    fixture_id: "0123456789abcdef".into(),
                    path: "fixtures/p/0123456789abcdef.json".into(),
                    labels: vec![Label::AssertPass, Label::AssertFail, Label::AssertPass],
                    verdict: Verdict::FreezeEligible,
                    status: FixtureStatus::Frozen,
                    freeze: Some(FreezeInfo {
                        property_id: "p".into(),
                        fixture_id: "0123456789abcdef".into(),
                        env_class: "remote".into(),
                        owner: format!("alice {nasty}"),
                        reason: format!("reason {nasty}"),
                        expires_at: "2026-12-10T00:00:00Z".into(),
                    }),
                    note: None,
                    signature: Some(format!("sig {nasty}")),
                    duration_ms: 0,
                },
                FixtureResult {
                    property_id: "q".into(),
                    fixture_id: "fedcba9876543210".into(),
                    path: "fixtures/q/fedcba9876543210.json".into(),
                    labels: vec![Label::HarnessError],
                    verdict: Verdict::InfraQueue,
                    status: FixtureStatus::Infra,
                    freeze: None,
                    note: Some(format!("harness_error: exit 125: {nasty}")),
                    signature: None,
                    duration_ms: 0,
                },
            ],
            campaigns: vec![CampaignResult {
                property_id: "p".into(),
                cases: 20,
                cases_run: 11,
                status: CampaignStatus::Failure,
                blocking: false,
                failing_case: Some(10),
                action: Some("pin_fixture".into()),
                fixture_id: Some("00112233aabbccdd".into()),
                minimal: Some("{\"s\":\"`<x>`|\u{85}\"}".into()),
                labels: vec![Label::AssertFail],
                signature: Some(format!("sig {nasty}")),
                already_pinned: false,
                trivial: false,
                oracle_calls: 3,
                shrinks: 1,
                note: Some(format!("note {nasty}")),
                infra: Some(format!("case 13: {nasty}")),
                duration_ms: 0,
            }],
            findings: vec![Finding {
                kind: crate::report::FindingKind::Ledger,
                blocking: true,
                file: Some("freeze/ledger.json".into()),
                line: Some(3),
                column: Some(7),
                rule: "ledger.owner".into(),
                message: format!("row 0, owner: {nasty}"),
            }],
            expired_rows: Vec::new(),
            patch: None,
            decision: Decision {
                outcome: Outcome::Pass,
                exit_code: 0,
            },
            summary: Summary::default(),
        };
        report.decide();
        report
    }

    /// Every text of a JUnit document, read back by a parser: its attributes and the texts of
    /// its failures, errors and skips.
    fn junit_texts(xml_text: &str) -> Vec<String> {
        let back = quick_junit::Report::deserialize_from_str(xml_text)
            .unwrap_or_else(|e| panic!("{e}: {xml_text}"));
        let mut texts = Vec::new();
        for suite in &back.test_suites {
            for case in &suite.test_cases {
                texts.push(case.name.as_str().to_owned());
                texts.extend(case.classname.as_ref().map(|t| t.as_str().to_owned()));
                match &case.status {
                    TestCaseStatus::NonSuccess {
                        message,
                        ty,
                        description,
                        ..
                    } => {
                        texts.extend(message.as_ref().map(|t| t.as_str().to_owned()));
                        texts.extend(ty.as_ref().map(|t| t.as_str().to_owned()));
                        texts.extend(description.as_ref().map(|t| t.as_str().to_owned()));
                    }
                    TestCaseStatus::Skipped {
                        message,
                        description,
                        ..
                    } => {
                        texts.extend(message.as_ref().map(|t| t.as_str().to_owned()));
                        texts.extend(description.as_ref().map(|t| t.as_str().to_owned()));
                    }
                    TestCaseStatus::Success { .. } => {}
                }
            }
        }
        texts
    }

    /// Characters XML 1.0 forbids, from an oracle, the ledger or a generated input, are written
    /// visibly: the document stays well-formed and no character is dropped unseen.
    #[test]
    fn the_junit_document_holds_only_xml_characters() {
        let mut report = hostile_report();
        let odd = "a\u{fffe}b\u{ffff}c\u{1}d\u{1b}[2Je\u{b}\tf\rg\u{7f}\u{85}h\ni";
        let visible = concat!(
            r"a\u{fffe}b\u{ffff}c\u{1}d\u{1b}[2Je\u{b}\tf\rg\u{7f}\u{85}h",
            "\ni"
        );
        report.fixtures[0].signature = Some(odd.into());
        if let Some(freeze) = report.fixtures[0].freeze.as_mut() {
            freeze.reason = odd.into();
        }
        report.fixtures[1].note = Some(odd.into());
        report.campaigns[0].minimal = Some(format!("{{\"s\":\"{odd}\"}}"));
        report.campaigns[0].infra = Some(odd.into());
        report.findings[0].file = Some(format!("props/{odd}.py"));
        report.findings[0].message = odd.into();
        // In an attribute a parser reads a raw line feed as a space: there it is written too.
        let in_attribute = visible.replace('\n', r"\n");
        let text = junit(&report);
        assert!(text.chars().all(xml_char), "{text:?}");
        assert!(attributes_hold_no_line_feed(&text), "{text}");
        let texts = junit_texts(&text);
        for (what, expected) in [
            (
                "freeze reason",
                format!("until 2026-12-10T00:00:00Z: {in_attribute}"),
            ),
            ("infra note", visible.to_string()),
            ("campaign's infra item", in_attribute.clone()),
            ("finding's file", format!("props/{in_attribute}.py")),
        ] {
            assert!(
                texts.iter().any(|t| t.ends_with(&expected)),
                "{what}: {expected:?} not in {texts:?}"
            );
        }
        // A new failure's text: the minimal input, then the signature, then the note, a line
        // each.
        let minimal = format!("minimal failing input: {{\"s\":\"{visible}\"}}\nfailure: sig ");
        assert!(
            texts.iter().any(|t| t.starts_with(&minimal)),
            "{minimal:?} not in {texts:?}"
        );
        let error = error_junit(odd, None);
        assert!(error.chars().all(xml_char), "{error:?}");
        assert!(attributes_hold_no_line_feed(&error), "{error}");
        assert!(junit_texts(&error).contains(&in_attribute));
    }

    /// Whether no attribute value of an XML document holds a raw line feed.
    fn attributes_hold_no_line_feed(document: &str) -> bool {
        let (mut in_tag, mut quote) = (false, None);
        for c in document.chars() {
            match (in_tag, quote, c) {
                (false, _, '<') => in_tag = true,
                (true, None, '>') => in_tag = false,
                (true, None, '"' | '\'') => quote = Some(c),
                (true, Some(q), c) if c == q => quote = None,
                (true, Some(_), '\n') => return false,
                _ => {}
            }
        }
        true
    }

    proptest! {
        /// Whatever an oracle writes, the JUnit document is one an XML parser reads, and its
        /// texts read back as the values with only the characters XML forbids made visible.
        #[test]
        fn any_oracle_text_makes_a_well_formed_junit_document(
            text in proptest::string::string_regex("[\\x00-\\x{2f}a\\x{7f}-\\x{a0}\\x{fffd}-\\x{ffff}\\x{10000}]{0,24}").expect("regex"),
        ) {
            let mut report = hostile_report();
            let note = format!("note [{text}]");
            report.fixtures[1].note = Some(note.clone());
            let document = junit(&report);
            prop_assert!(document.chars().all(xml_char), "{:?}", document);
            let texts = junit_texts(&document);
            let expected = xml(&note);
            prop_assert!(texts.contains(&expected), "{:?} not in {:?}", expected, texts);
        }
    }

    #[test]
    fn the_text_report_escapes_what_oracles_and_the_ledger_wrote() {
        let report = hostile_report();
        let text = format!(
            "{}{}",
            settings_text(&report.settings),
            body_text(&report, Style { color: false })
        );
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        insta::assert_snapshot!("text_escaped", text);
    }

    /// Annotations are one line each, and what oracles, the ledger and files wrote reaches
    /// the job log with no control character, escape sequence, separator or bidirectional
    /// control: written visibly, as in the text report.
    #[test]
    fn github_annotations_escape_what_oracles_and_the_ledger_wrote() {
        let report = hostile_report();
        let out = github(&report);
        let error = error_github("bad \u{1b}[2J\u{2028}\u{202e}x\r\ny", None);
        for text in [&out, &error] {
            assert!(
                !text
                    .chars()
                    .any(|c| c != '\n' && c != '\\' && needs_escape(c)),
                "{text:?}"
            );
            assert!(text.lines().all(|l| l.starts_with("::")), "{text}");
        }
        assert!(
            out.contains(r"sig line one\nline two\r\u{1b}[31mred"),
            "{out}"
        );
        assert!(
            error.ends_with("::bad \\u{1b}[2J\\u{2028}\\u{202e}x\\r\\ny\n"),
            "{error}"
        );
    }

    #[test]
    fn the_step_summary_escapes_markdown_and_line_breaks() {
        let md = github_step_summary(&hostile_report());
        assert!(!md.contains("<b>") && !md.contains('\r'), "{md}");
        // One line per table row or list item: no value adds a line.
        assert_eq!(md.lines().count(), 12, "{md}");
        insta::assert_snapshot!("step_summary_escaped", md);
    }
}
