//! CPU time from the operating system's resource usage, for the match report's engine and
//! runner CPU figures.

use std::time::Duration;

/// User + system CPU time of this process (`RUSAGE_SELF`) or of its terminated, reaped
/// children (`RUSAGE_CHILDREN`: the engines, once they have quit).
pub fn cpu_time(who: libc::c_int) -> Duration {
    // SAFETY: getrusage only writes into the zeroed struct we pass; `who` is one of the two
    // valid selectors above.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}
