//! Processes that leave a run's process group (`setsid`, `setpgid`, a daemon's double fork):
//! how a run marks its processes, and the sweep that kills those still running when the run
//! ends, where this process is a child subreaper (SPEC §4: "no process left").
//!
//! A process that left the group is beyond `kill(-pgid)`, and once its parent is gone
//! nothing in the process tree says which run it came from. So every run gets a mark of its
//! own, `<runner pid>.<run number>`, in [`MARK_VAR`] in its environment, which its
//! descendants inherit. When a run ends (its group settled), the sweep looks at the
//! children of this process (orphans are reparented here, as the subreaper) and kills those
//! that carry the run's mark or hold the run's end of one of its pipes (an escapee that
//! cleared its environment), with their groups where they lead one; then it reaps them and
//! looks again, since their own children come here in turn. A child still exiting keeps it
//! looking: the kernel hands a dying process's children on only after freeing its memory,
//! which hides its environment and, for a large process, takes longer than a few looks.
//!
//! It never touches a process in this process's own group or in the group of a run still
//! going, nor one that is no child of this process (so no pid can have been reused under
//! it: a child's pid stays its own until this process reaps it), nor one it cannot tie to
//! the ending run: another run's escapee lives until that run ends, and a process some other
//! code started (or its orphan) is left alone.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError, RwLock};
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::process::{
    Pid, Signal, WaitOptions, getpgrp, getpid, kill_process, kill_process_group,
    test_kill_process_group, waitpid,
};

use crate::process::{ProcStat, group_is_running};

/// The environment variable that carries the marks of the runs a process belongs to:
/// `<runner pid>.<run number>`, after the marks the runner itself carries (an outer runner's),
/// separated by `,`.
pub(crate) const MARK_VAR: &str = "FREEZEGATE_RUN_MARK";

/// The number of the next run of this process.
static NEXT_RUN: AtomicU64 = AtomicU64::new(1);

/// The runs of this process that have not ended: run number → process group (0 until the
/// run's process is started).
static ACTIVE: Mutex<BTreeMap<u64, i32>> = Mutex::new(BTreeMap::new());

fn active() -> std::sync::MutexGuard<'static, BTreeMap<u64, i32>> {
    ACTIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether [`kill_active_runs`] was called: then no run starts a process any more. Held for
/// reading from just before a run's process is started until its group is recorded, so that
/// a kill waits for the starts in progress and finds their groups.
static STOPPED: RwLock<bool> = RwLock::new(false);

/// How long [`kill_active_runs`] waits for the processes it killed to be gone.
const KILL_LIMIT: Duration = Duration::from_secs(2);

/// Starts the process of the run with `mark` and records its process group (the process's
/// pid: `cmd` must put it in a group of its own), unless [`kill_active_runs`] was called.
pub(crate) fn spawn_run(cmd: &mut Command, mark: &RunMark) -> io::Result<Child> {
    let stopped = STOPPED.read().unwrap_or_else(PoisonError::into_inner);
    if *stopped {
        return Err(io::Error::other(
            "this process is stopping: its runs were killed",
        ));
    }
    let child = cmd.spawn()?;
    if let Some(pgid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) {
        mark.set_group(pgid);
    }
    Ok(child)
}

/// Kills (SIGKILL) the process group of every run of this process that is still going, and
/// stops new runs from starting a process: for a program that handles SIGINT, SIGTERM or
/// SIGHUP itself and is about to exit. Returns the number of runs whose groups were killed.
///
/// The runs are those of [`crate::ProcessOracle`], [`crate::WorkerOracle`] (a live worker
/// counts as a run, idle or not) and [`crate::ShellCommand`], on every thread; a process
/// being started on another thread is waited for and killed with its group. Where this
/// process is a child subreaper ([`crate::become_child_subreaper`]), the processes of these
/// runs that left their groups are found by the runs' mark and killed too, with the groups
/// they lead. It returns once none of them runs, or after a few seconds for a process stuck
/// in the kernel.
///
/// Afterwards every run of this process ends at once: a run that starts is a
/// `harness_error` (or a [`crate::CommandEnd::NotRun`]) that says the process is stopping,
/// and a run that was going sees its process die. Their results mean nothing; exit.
///
/// This crate installs no signal handler: a process-wide handler is its binary's choice.
/// Call this from the thread that receives the signals (`signal-hook`'s iterator, for
/// instance), not from a signal handler itself: it takes locks and reads `/proc`.
pub fn kill_active_runs() -> usize {
    // Waits for the starts in progress: their groups are recorded once it is held.
    let mut stopped = STOPPED.write().unwrap_or_else(PoisonError::into_inner);
    *stopped = true;
    drop(stopped);
    let groups: Vec<Pid> = active()
        .values()
        .filter_map(|&g| Pid::from_raw(g))
        .collect();
    let killed = groups
        .iter()
        .filter(|&&g| kill_process_group(g, Signal::KILL).is_ok())
        .count();
    let limit = Instant::now() + KILL_LIMIT;
    kill_marked_escapees(&groups, limit);
    let mut pause = Duration::from_micros(200);
    while groups
        .iter()
        .any(|g| group_is_running(g.as_raw_nonzero().get().unsigned_abs()))
        && Instant::now() < limit
    {
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
    killed
}

/// Where this process is a child subreaper: kills the running children of this process that
/// carry the mark of any run of this process (with the groups they lead), then their own
/// children as they are reparented here, until two looks in a row find none or `limit`
/// passes. Kills are all that is sent: the caller is exiting, so nothing is reaped.
///
/// A look is quiet only if, besides, none of the killed `groups` runs and no child of this
/// process is still exiting: a dying process hands its children on last, after freeing its
/// memory (which also hides its environment, so its mark), and that can take longer than
/// the looks do.
fn kill_marked_escapees(groups: &[Pid], limit: Instant) {
    if !matches!(rustix::process::child_subreaper(), Ok(Some(_))) {
        return;
    }
    let me = getpid().as_raw_nonzero().get();
    let own_group = getpgrp().as_raw_nonzero().get();
    let prefix = format!("{me}.");
    let mut killed: BTreeSet<i32> = BTreeSet::new();
    let mut quiet = 0;
    while quiet < 2 && Instant::now() < limit {
        let mut busy = groups
            .iter()
            .any(|g| group_is_running(g.as_raw_nonzero().get().unsigned_abs()));
        for pid in children_of(me) {
            let Some(stat) = ProcStat::read(pid) else {
                continue;
            };
            if stat.ppid != me || stat.pgrp == own_group {
                continue;
            }
            if still_exiting(pid, &stat) || (stat.running() && killed.contains(&pid)) {
                busy = true;
                continue;
            }
            if !stat.running() {
                continue;
            }
            let marked = std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|environ| environ_has_mark_from(&environ, prefix.as_bytes()));
            let Some(child) = Pid::from_raw(pid) else {
                continue;
            };
            if !marked {
                continue;
            }
            busy = true;
            if killed.insert(pid) {
                if stat.pgrp == pid {
                    let _ = kill_process_group(child, Signal::KILL);
                }
                let _ = kill_process(child, Signal::KILL);
            }
        }
        quiet = if busy { 0 } else { quiet + 1 };
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `PF_EXITING` of the kernel's `sched.h`: set on a thread as it starts to exit.
const EXITING: u32 = 0x4;

/// Whether process `pid` (with `stat`), a child of this process, is exiting but may not have
/// handed its own children on yet: the kernel first frees its memory and closes its files,
/// and gives its children to this process (the subreaper) only as its last thread ends. A
/// zombie whose leader thread ended before its other threads is still exiting while one of
/// them is.
fn still_exiting(pid: i32, stat: &ProcStat) -> bool {
    if stat.running() {
        return stat.flags & EXITING != 0;
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        task.file_name().to_str() != Some(&pid.to_string())
            && std::fs::read_to_string(task.path().join("stat"))
                .ok()
                .and_then(|text| ProcStat::parse(&text))
                .is_some_and(|thread| thread.running() && thread.flags & EXITING != 0)
    })
}

/// One run's mark: registered as active from its creation until [`RunMark::sweep`] or drop.
#[derive(Debug)]
pub(crate) struct RunMark {
    run: u64,
    token: String,
    active: bool,
}

/// What a sweep did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Swept {
    /// How many processes outside the run's group were running and were killed.
    pub(crate) killed: usize,
    /// False if one of them still ran at the limit.
    pub(crate) settled: bool,
}

impl RunMark {
    /// A new run, active from now on.
    pub(crate) fn new() -> RunMark {
        let run = NEXT_RUN.fetch_add(1, Ordering::Relaxed);
        active().insert(run, 0);
        RunMark {
            run,
            token: format!("{}.{run}", std::process::id()),
            active: true,
        }
    }

    /// The value of [`MARK_VAR`] for the run's process: the marks this process carries, if
    /// any, then the run's own.
    pub(crate) fn env_value(&self) -> OsString {
        match std::env::var_os(MARK_VAR) {
            Some(mut outer) if !outer.is_empty() => {
                outer.push(",");
                outer.push(&self.token);
                outer
            }
            _ => OsString::from(&self.token),
        }
    }

    /// Records the run's process group once its process is started.
    pub(crate) fn set_group(&self, pgid: Pid) {
        if self.active {
            active().insert(self.run, pgid.as_raw_nonzero().get());
        }
    }

    fn end(&mut self) {
        if self.active {
            active().remove(&self.run);
            self.active = false;
        }
    }

    /// Ends the run and, if this process is a child subreaper, kills and reaps the
    /// processes that left its group: children of this process carrying the run's mark or
    /// holding the run's end of one of `pipes`. Call it once no process of the run's group
    /// runs. Gives up at `limit`.
    pub(crate) fn sweep(&mut self, pipes: &[PipeEnd], limit: Instant) -> Swept {
        self.end();
        let this = &*self;
        sweep_children(&|pid, stat| this.owns(pid, stat, pipes), limit)
    }

    /// Whether process `pid`, a child of this process, is the run's: it carries the run's
    /// mark, or holds the run's end of one of its pipes and is not a child this process is
    /// still forking.
    ///
    /// (Until it runs its program, a child this process forks on another thread has a copy
    /// of this process's environment, which never holds this process's marks, and of all its
    /// descriptors, which may hold the run's ends while the run's process is being started.)
    fn owns(&self, pid: i32, stat: &ProcStat, pipes: &[PipeEnd]) -> bool {
        if let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ"))
            && environ_has_mark(&environ, self.token.as_bytes())
        {
            return true;
        }
        !pipes.is_empty() && !still_forking(pid, stat) && holds_any(pid, pipes)
    }
}

impl Drop for RunMark {
    fn drop(&mut self) {
        self.end();
    }
}

/// Where this process is a child subreaper ([`crate::become_child_subreaper`]), kills the
/// processes it adopted that still run: every running child of this process outside its own
/// process group and the groups of runs still going, with the group it leads, then their
/// children as they are reparented here; reaps them, and gives up at `limit` from now.
/// Returns how many processes were killed.
///
/// For the end of a command, once its runs have ended and it has waited for the processes
/// it started itself: every child left then is an orphan of one of its runs that the sweep
/// at the run's end could not tie to the run — one that left the run's group with an empty
/// environment and none of the run's pipes (`env -i setsid … </dev/null >/dev/null 2>&1 &`,
/// Python's `subprocess.Popen(…, env={}, start_new_session=True, stdin=DEVNULL,
/// stdout=DEVNULL, stderr=DEVNULL)`). A child that other code of this process started in a
/// group of its own and has not waited for would be killed too.
pub fn kill_orphans(limit: Duration) -> usize {
    sweep_children(&|_, _| true, Instant::now() + limit).killed
}

/// Where this process is a child subreaper: kills the running children of this process that
/// `owns` picks, outside this process's own group and the groups of runs still going (with
/// the groups they lead), reaps them, and looks again for their children as they are
/// reparented here, until two looks in a row find nothing to do or `limit` passes.
fn sweep_children(owns: &dyn Fn(i32, &ProcStat) -> bool, limit: Instant) -> Swept {
    let mut swept = Swept {
        killed: 0,
        settled: true,
    };
    if !matches!(rustix::process::child_subreaper(), Ok(Some(_))) {
        // Orphans went to another reaper (PID 1): out of reach.
        return swept;
    }
    let me = getpid().as_raw_nonzero().get();
    let own_group = getpgrp().as_raw_nonzero().get();
    // Children of ours that were sent SIGKILL, groups led by one of them that were too,
    // and every process counted as killed.
    let mut killed: BTreeSet<i32> = BTreeSet::new();
    let mut groups: BTreeSet<i32> = BTreeSet::new();
    let mut counted: BTreeSet<i32> = BTreeSet::new();
    let mut pause = Duration::from_micros(200);
    // A thread's list of children can miss one while others are reaped: only two quiet
    // looks in a row end the sweep.
    let mut quiet = 0;
    loop {
        let mut busy = false;
        let running_groups: BTreeSet<i32> =
            active().values().copied().filter(|&g| g != 0).collect();
        for pid in children_of(me) {
            let Some(stat) = ProcStat::read(pid) else {
                continue;
            };
            if stat.ppid != me {
                continue;
            }
            let Some(child) = Pid::from_raw(pid) else {
                continue;
            };
            let ours = killed.contains(&pid) || groups.contains(&stat.pgrp);
            if still_exiting(pid, &stat) {
                // Its children (escapees of the run, maybe) come here only once it is
                // gone, and meanwhile its mark may be unreadable: look again.
                busy = true;
            }
            if !stat.running() {
                if ours {
                    // An unreaped child of ours: the pid names no one else. Its own
                    // children were reparented here before it became a zombie: look
                    // again.
                    if let Ok(Some(_)) = waitpid(Some(child), WaitOptions::NOHANG) {
                        killed.remove(&pid);
                    }
                    busy = true;
                }
                continue;
            }
            if ours {
                busy = true;
                continue;
            }
            if stat.pgrp == own_group || running_groups.contains(&stat.pgrp) || !owns(pid, &stat) {
                continue;
            }
            counted.insert(pid);
            if stat.pgrp == pid {
                // It leads its group, and as our unreaped child it keeps the group id
                // from being reused: the whole group goes.
                counted.extend(group_members(pid));
                let _ = kill_process_group(child, Signal::KILL);
                groups.insert(pid);
            }
            let _ = kill_process(child, Signal::KILL);
            killed.insert(pid);
            busy = true;
        }
        // Members of a killed group that are not (yet) our children.
        groups.retain(|&g| {
            Pid::from_raw(g).is_some_and(|g| test_kill_process_group(g) != Err(Errno::SRCH))
        });
        if groups.iter().any(|&g| group_is_running(g.unsigned_abs())) {
            busy = true;
        }
        swept.killed = counted.len();
        if !busy {
            quiet += 1;
            if quiet == 2 {
                return swept;
            }
            continue;
        }
        quiet = 0;
        if Instant::now() >= limit {
            swept.settled = false;
            return swept;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Whether an environment block (`/proc/PID/environ`: `KEY=VALUE` entries ended by NUL)
/// has `token` among the marks of [`MARK_VAR`].
fn environ_has_mark(environ: &[u8], token: &[u8]) -> bool {
    marks(environ).any(|mark| mark == token)
}

/// Whether an environment block has a mark of [`MARK_VAR`] that starts with `prefix`
/// (`<runner pid>.`: a mark of any run of that runner).
fn environ_has_mark_from(environ: &[u8], prefix: &[u8]) -> bool {
    marks(environ).any(|mark| mark.starts_with(prefix))
}

/// The marks of [`MARK_VAR`] in an environment block.
fn marks(environ: &[u8]) -> impl Iterator<Item = &[u8]> {
    let key = MARK_VAR.as_bytes();
    environ
        .split(|&b| b == 0)
        .filter_map(|entry| entry.strip_prefix(key)?.strip_prefix(b"="))
        .flat_map(|value| value.split(|&b| b == b','))
}

/// The end of one of a run's pipes that the run's processes hold: the write end of stdout
/// and stderr, the read end of stdin.
///
/// Holding the pipe is not enough to be the run's: this process holds the other ends, and
/// so, until it runs its program, does every child this process forks on any thread (a
/// copy of all its descriptors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PipeEnd {
    /// The `/proc/self/fd` link target, `pipe:[inode]`: the same for both ends.
    id: PathBuf,
    /// Whether the run's end is the write end.
    writes: bool,
}

impl PipeEnd {
    /// The run's end of the pipe whose other end is `ours`: the write end if the run
    /// `writes` to the pipe, else the read end. `None` if `ours` is not a pipe.
    pub(crate) fn opposite(ours: BorrowedFd<'_>, writes: bool) -> Option<PipeEnd> {
        let id = std::fs::read_link(format!("/proc/self/fd/{}", ours.as_raw_fd())).ok()?;
        id.as_os_str()
            .as_encoded_bytes()
            .starts_with(b"pipe:")
            .then_some(PipeEnd { id, writes })
    }
}

/// Whether a child this process forks holds the run's end of one of `pipes`: it does so
/// for a moment, until it runs its program, when it was forked while the run's process was
/// being started.
pub(crate) fn forking_child_holds(pipes: &[PipeEnd]) -> bool {
    let me = getpid().as_raw_nonzero().get();
    children_of(me).into_iter().any(|pid| {
        ProcStat::read(pid).is_some_and(|stat| stat.ppid == me && still_forking(pid, &stat))
            && holds_any(pid, pipes)
    })
}

/// Whether process `pid` (with `stat`) is a fork of this process that has not run a program
/// yet: the kernel's "forked but did not exec" flag, and this process's executable.
fn still_forking(pid: i32, stat: &ProcStat) -> bool {
    /// `PF_FORKNOEXEC` of the kernel's `sched.h`: set by fork, cleared by exec.
    const FORKED_NOT_EXECUTED: u32 = 0x40;
    static OWN_EXE: OnceLock<Option<PathBuf>> = OnceLock::new();
    stat.flags & FORKED_NOT_EXECUTED != 0
        && OWN_EXE
            .get_or_init(|| std::fs::read_link("/proc/self/exe").ok())
            .as_ref()
            .is_some_and(|own| {
                std::fs::read_link(format!("/proc/{pid}/exe")).ok().as_ref() == Some(own)
            })
}

/// Whether process `pid` holds the run's end of one of `pipes`.
fn holds_any(pid: i32, pipes: &[PipeEnd]) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        let Ok(target) = std::fs::read_link(fd.path()) else {
            return false;
        };
        pipes.iter().any(|pipe| {
            pipe.id == target
                && std::fs::read_to_string(
                    Path::new("/proc")
                        .join(pid.to_string())
                        .join("fdinfo")
                        .join(fd.file_name()),
                )
                .ok()
                .and_then(|info| opened_for_writing(&info))
                    == Some(pipe.writes)
        })
    })
}

/// From the text of `/proc/PID/fdinfo/FD`: whether the descriptor is open for writing only
/// (`true`) or reading only (`false`); `None` for both or an unreadable text.
fn opened_for_writing(fdinfo: &str) -> Option<bool> {
    let flags = fdinfo.lines().find_map(|l| l.strip_prefix("flags:"))?;
    match u32::from_str_radix(flags.trim(), 8).ok()? & 0o3 {
        0 => Some(false),
        1 => Some(true),
        _ => None,
    }
}

/// The children of process `me` (this process): from each thread's `children` list where
/// the kernel has them, else from a scan of `/proc`.
fn children_of(me: i32) -> Vec<i32> {
    static LISTS: OnceLock<bool> = OnceLock::new();
    let mut pids = Vec::new();
    if *LISTS.get_or_init(|| Path::new("/proc/thread-self/children").exists()) {
        let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
            return pids;
        };
        for task in tasks.flatten() {
            // A thread may have ended since: skip what cannot be read.
            if let Ok(list) = std::fs::read_to_string(task.path().join("children")) {
                pids.extend(
                    list.split_ascii_whitespace()
                        .filter_map(|p| p.parse::<i32>().ok()),
                );
            }
        }
    } else {
        crate::process::for_each_process(|pid, stat| {
            if stat.ppid == me {
                pids.push(pid);
            }
        });
    }
    pids
}

/// The running processes of group `pgid`.
fn group_members(pgid: i32) -> Vec<i32> {
    let mut pids = Vec::new();
    crate::process::for_each_process(|pid, stat| {
        if stat.pgrp == pgid && stat.running() {
            pids.push(pid);
        }
    });
    pids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_found_among_the_environment_and_the_outer_marks() {
        let env = b"PATH=/bin\0FREEZEGATE_RUN_MARK=7.1,42.3\0HOME=/\0";
        assert!(environ_has_mark(env, b"42.3"));
        assert!(environ_has_mark(env, b"7.1"));
        assert!(!environ_has_mark(env, b"42.31"));
        assert!(!environ_has_mark(env, b"2.3"));
        assert!(!environ_has_mark(b"FREEZEGATE_RUN_MARKS=42.3\0", b"42.3"));
        assert!(!environ_has_mark(b"X=FREEZEGATE_RUN_MARK=42.3\0", b"42.3"));
        assert!(!environ_has_mark(b"", b"42.3"));
        assert!(environ_has_mark(b"FREEZEGATE_RUN_MARK=42.3", b"42.3"));
        assert!(environ_has_mark_from(env, b"42."));
        assert!(environ_has_mark_from(env, b"7."));
        assert!(!environ_has_mark_from(env, b"4."));
        assert!(!environ_has_mark_from(
            b"FREEZEGATE_RUN_MARKS=42.3\0",
            b"42."
        ));
    }

    #[test]
    fn fdinfo_flags_give_the_access_mode() {
        assert_eq!(
            opened_for_writing("pos:\t0\nflags:\t02000001\nmnt_id:\t15\n"),
            Some(true)
        );
        assert_eq!(
            opened_for_writing("pos:\t0\nflags:\t02004000\n"),
            Some(false)
        );
        assert_eq!(opened_for_writing("flags:\t02\n"), None);
        assert_eq!(opened_for_writing("pos:\t0\n"), None);
        assert_eq!(opened_for_writing("flags:\tx\n"), None);
    }

    #[test]
    fn the_run_end_of_a_pipe_is_told_from_ours() -> std::io::Result<()> {
        let mut child = std::process::Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()?;
        let me = std::process::id() as i32;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other("no pipes"));
        };
        use std::os::fd::AsFd;
        let run_reads = PipeEnd::opposite(stdin.as_fd(), false);
        let run_writes = PipeEnd::opposite(stdout.as_fd(), true);
        let ours = [
            PipeEnd::opposite(stdin.as_fd(), true),
            PipeEnd::opposite(stdout.as_fd(), false),
        ];
        let (ours, theirs): (Vec<_>, Vec<_>) = (
            ours.into_iter().flatten().collect(),
            [run_reads, run_writes].into_iter().flatten().collect(),
        );
        assert_eq!((ours.len(), theirs.len()), (2, 2));
        assert!(holds_any(child.id() as i32, &theirs));
        assert!(!holds_any(child.id() as i32, &ours));
        assert!(holds_any(me, &ours));
        assert!(!holds_any(me, &theirs));
        drop((stdin, stdout));
        child.wait()?;
        Ok(())
    }

    #[test]
    fn a_run_is_active_until_it_is_swept_or_dropped() {
        let mut mark = RunMark::new();
        let run = mark.run;
        assert!(active().contains_key(&run));
        assert!(mark.env_value().to_string_lossy().ends_with(&mark.token));
        mark.sweep(&[], Instant::now());
        assert!(!active().contains_key(&run));
        let dropped = RunMark::new();
        let run = dropped.run;
        drop(dropped);
        assert!(!active().contains_key(&run));
    }
}
