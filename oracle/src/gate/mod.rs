//! The build-shape gate (docs/architecture.md): the evaluation's fast
//! variant must run on hardware POPCNT.
//!
//! A runtime-dispatched engine contains both the POPCNT variant and the software fallback, so a
//! byte scan of the whole binary proves nothing: the gate reads the fast variant's own symbol(s)
//! and the functions they call, directly or by tail jump, to the constitution's `callee_depth`.
//! It passes iff every entry symbol exists, scalar `popcnt` occurs in what each one reaches, and
//! no reached function carries the software popcount (the SWAR masks) or AVX-512 `vpopcnt*`.

pub mod demangle;
pub mod elf;
pub mod scan;

use std::collections::{BTreeSet, VecDeque};

use serde::Serialize;

use elf::{Binary, Function};

/// The engine's fast evaluation entry (the constitution may list others).
pub const DEFAULT_SYMBOL: &str = "coherent_evaluate_popcnt";

/// How deep the gate follows direct calls from an entry symbol where no constitution says.
pub const DEFAULT_CALLEE_DEPTH: u32 = 2;

/// One function the gate disassembled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScannedFunction {
    /// Readable name (Rust symbols demangled, legacy hashes dropped).
    pub name: String,
    /// Raw symbol name.
    pub symbol: String,
    /// Start address.
    pub address: String,
    /// Size in bytes.
    pub size: u64,
    /// Call depth from the entry that first reached it (0 = an entry symbol).
    pub depth: u32,
    /// The function that first reached it (`null` for an entry).
    pub called_from: Option<String>,
    /// Every entry symbol (as asked for) that reaches it within the callee depth.
    pub entries: Vec<String>,
    /// Scalar `popcnt` instructions.
    pub popcnt: u32,
    /// AVX-512 `vpopcnt*` instructions.
    pub vpopcnt: u32,
    /// SWAR masks present (hex).
    pub swar_constants: Vec<String>,
    /// The SWAR sequence is present (0x5555… and 0x3333… together).
    pub software_popcount: bool,
    /// Calls through registers or memory, whose targets the gate cannot follow.
    pub indirect_calls: u32,
    /// Positions that did not decode as x86-64 instructions.
    pub undecodable: u32,
}

/// The gate's verdict and everything it counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateReport {
    /// All checks held.
    pub pass: bool,
    /// The entry symbols asked for.
    pub symbols: Vec<String>,
    /// How many levels of direct callees were followed from each entry symbol.
    pub callee_depth: u32,
    /// Every function disassembled, entries first, in the order reached.
    pub functions_scanned: Vec<ScannedFunction>,
    /// Scalar `popcnt` instructions in all scanned functions.
    pub popcnt: u32,
    /// Scanned functions that carry the software popcount.
    pub software_popcount: u32,
    /// AVX-512 `vpopcnt*` instructions in all scanned functions.
    pub vpopcnt: u32,
    /// Direct calls to addresses that are no function symbol (PLT stubs), not followed.
    pub unresolved_calls: u32,
    /// Why the gate failed, one sentence each (empty on pass).
    pub failures: Vec<String>,
}

/// The binary could not be inspected at all (as opposed to failing the gate).
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// Not a parsable object file.
    #[error("not an ELF binary: {0}")]
    Parse(#[from] object::Error),
    /// Another architecture than x86-64.
    #[error("the gate decodes x86-64 only")]
    Architecture,
}

/// Runs the gate over `bytes` (an ELF executable) for the entry `symbols`, following direct
/// calls to `callee_depth` levels.
pub fn inspect(
    bytes: &[u8],
    symbols: &[String],
    callee_depth: u32,
) -> Result<GateReport, GateError> {
    let binary = Binary::parse(bytes)?;
    if !binary.is_x86_64() {
        return Err(GateError::Architecture);
    }
    let mut report = GateReport {
        pass: false,
        symbols: symbols.to_vec(),
        callee_depth,
        functions_scanned: Vec::new(),
        popcnt: 0,
        software_popcount: 0,
        vpopcnt: 0,
        unresolved_calls: 0,
        failures: Vec::new(),
    };
    if symbols.is_empty() {
        report.failures.push("no entry symbol to inspect".into());
    }
    if !binary.has_symbols() && !symbols.is_empty() {
        report.failures.push(
            "the binary has no symbol table (stripped): the evaluation cannot be located".into(),
        );
    }
    let mut expanded = BTreeSet::new();
    for symbol in symbols {
        match binary.function_named(symbol) {
            Some(entry) => {
                let walk = Walk {
                    binary: &binary,
                    symbol,
                    callee_depth,
                };
                walk.scan_from(entry, &mut expanded, &mut report);
            }
            None if binary.has_symbols() => report.failures.push(format!(
                "entry symbol `{symbol}` is not in the binary's symbol table"
            )),
            None => {}
        }
    }
    for function in &report.functions_scanned {
        if function.software_popcount {
            report.failures.push(format!(
                "software popcount (SWAR masks {}) in `{}` (depth {}, called from `{}`): it was not compiled for POPCNT",
                function.swar_constants.join(", "),
                function.name,
                function.depth,
                function.called_from.as_deref().unwrap_or("-"),
            ));
        }
        if function.undecodable > 0 {
            report.failures.push(format!(
                "`{}` has {} positions that do not decode as x86-64: it cannot be inspected",
                function.name, function.undecodable
            ));
        }
        if function.vpopcnt > 0 {
            report.failures.push(format!(
                "AVX-512 vpopcnt in `{}`: the release must run on baseline x86-64 with POPCNT",
                function.name
            ));
        }
    }
    report.popcnt = report.functions_scanned.iter().map(|f| f.popcnt).sum();
    report.vpopcnt = report.functions_scanned.iter().map(|f| f.vpopcnt).sum();
    report.software_popcount = report
        .functions_scanned
        .iter()
        .map(|f| u32::from(f.software_popcount))
        .sum();
    for symbol in symbols {
        let reached_popcnt = report
            .functions_scanned
            .iter()
            .any(|f| f.popcnt > 0 && f.entries.contains(symbol));
        if binary.function_named(symbol).is_some() && !reached_popcnt {
            report.failures.push(format!(
                "no scalar popcnt in `{symbol}` or its callees to depth {callee_depth}"
            ));
        }
    }
    report.pass = report.failures.is_empty();
    Ok(report)
}

/// One entry symbol's walk over the call graph.
struct Walk<'a> {
    binary: &'a Binary<'a>,
    /// The entry symbol as asked for: what reached functions are attributed to.
    symbol: &'a String,
    callee_depth: u32,
}

impl Walk<'_> {
    /// Breadth-first over direct calls from `entry` to the callee depth. Every function reached is
    /// attributed to this walk's symbol, also when another entry reached it first: entries that
    /// share a helper all reach its `popcnt`. A function is listed once; `expanded` holds those
    /// whose callees were followed, so their unresolved calls are counted once.
    fn scan_from(&self, entry: &Function, expanded: &mut BTreeSet<u64>, report: &mut GateReport) {
        let mut queue = VecDeque::from([(entry.clone(), 0, None)]);
        let mut reached = BTreeSet::new();
        while let Some((function, depth, called_from)) = queue.pop_front() {
            if !reached.insert(function.address) {
                continue;
            }
            let found = scan::scan(self.binary, &function);
            let name = demangle::demangle(&function.name);
            let address = format!("{:#x}", function.address);
            if depth < self.callee_depth {
                let first = expanded.insert(function.address);
                for callee in &found.callees {
                    match self.binary.function_at(*callee) {
                        Some(target) => {
                            queue.push_back((target.clone(), depth + 1, Some(name.clone())));
                        }
                        None if first => report.unresolved_calls += 1,
                        None => {}
                    }
                }
            }
            if let Some(listed) = report
                .functions_scanned
                .iter_mut()
                .find(|f| f.address == address)
            {
                if !listed.entries.contains(self.symbol) {
                    listed.entries.push(self.symbol.clone());
                }
                continue;
            }
            report.functions_scanned.push(ScannedFunction {
                name,
                symbol: function.name.clone(),
                address,
                size: function.size,
                depth,
                called_from,
                entries: vec![self.symbol.clone()],
                popcnt: found.popcnt,
                vpopcnt: found.vpopcnt,
                swar_constants: scan::SWAR_CONSTANTS
                    .iter()
                    .zip(found.swar)
                    .filter(|(_, present)| *present)
                    .map(|(constant, _)| format!("{constant:#018x}"))
                    .collect(),
                software_popcount: found.software_popcount(),
                indirect_calls: found.indirect_calls,
                undecodable: found.invalid,
            });
        }
    }
}

/// The most evaluation-like names [`evaluation_functions`] offers.
const MAX_EVALUATION_FUNCTIONS: usize = 12;

/// The functions of the binary whose readable name says "evaluat…" (any case), a few at most:
/// the entry symbols a contract's gate might name, offered to a maintainer who must choose.
pub fn evaluation_functions(bytes: &[u8]) -> Result<Vec<String>, GateError> {
    let binary = Binary::parse(bytes)?;
    let mut names: Vec<String> = binary
        .function_names()
        .filter(|name| name.to_ascii_lowercase().contains("evaluat"))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    names.truncate(MAX_EVALUATION_FUNCTIONS);
    Ok(names)
}

/// A short human summary: verdict, counts, each scanned function, each failure.
#[must_use]
pub fn render(report: &GateReport) -> String {
    let mut out = format!(
        "gate: {}\nsymbols: {}\nscanned {} functions (depth <= {}): popcnt {}, software popcount in {}, vpopcnt {}, unresolved calls {}\n",
        if report.pass { "PASS" } else { "FAIL" },
        report.symbols.join(", "),
        report.functions_scanned.len(),
        report.callee_depth,
        report.popcnt,
        report.software_popcount,
        report.vpopcnt,
        report.unresolved_calls,
    );
    for function in &report.functions_scanned {
        out.push_str(&format!(
            "  [{}] {} {} ({} bytes): popcnt {}, vpopcnt {}, swar [{}], indirect calls {}\n",
            function.depth,
            function.address,
            function.name,
            function.size,
            function.popcnt,
            function.vpopcnt,
            function.swar_constants.join(" "),
            function.indirect_calls,
        ));
    }
    for failure in &report.failures {
        out.push_str(&format!("FAIL: {failure}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Call graphs for the gate to walk in this test binary: two entries share a popcount leaf at
    // depth 1, and a chain reaches it only at depth 2. The leaf is assembly so that no optimiser
    // setting can replace or move its `popcnt`; the bodies differ so that no pass merges them.

    #[inline(never)]
    fn popcnt_leaf(x: u64) -> u64 {
        let count: u64;
        // SAFETY: `popcnt` only reads and writes the two registers named here.
        unsafe {
            std::arch::asm!("popcnt {0}, {1}", out(reg) count, in(reg) x, options(pure, nomem, nostack));
        }
        count
    }

    #[inline(never)]
    fn gate_entry_a(x: u64) -> u64 {
        popcnt_leaf(x) ^ 3
    }

    #[inline(never)]
    fn gate_entry_b(x: u64) -> u64 {
        popcnt_leaf(x).wrapping_mul(5)
    }

    #[inline(never)]
    fn gate_middle(x: u64) -> u64 {
        popcnt_leaf(x).wrapping_add(11)
    }

    #[inline(never)]
    fn gate_chain(x: u64) -> u64 {
        gate_middle(x) ^ 7
    }

    /// This test binary, after calling every fixture function so that all of them are linked.
    fn fixture_binary() -> Vec<u8> {
        let x = std::hint::black_box(0xff);
        assert_eq!(
            [gate_entry_a(x), gate_entry_b(x), gate_chain(x)],
            [8 ^ 3, 40, 19 ^ 7]
        );
        std::fs::read(std::env::current_exe().unwrap()).unwrap()
    }

    fn path(name: &str) -> String {
        format!("oracle::gate::tests::{name}")
    }

    /// The raw (mangled) symbol of a fixture function, as a constitution naming a
    /// `#[no_mangle]` symbol gives it.
    fn raw(binary: &[u8], name: &str) -> String {
        let binary = Binary::parse(binary).unwrap();
        binary.function_named(&path(name)).unwrap().name.clone()
    }

    #[test]
    fn the_callee_depth_decides_how_far_the_gate_reads() {
        let me = fixture_binary();
        let chain = [raw(&me, "gate_chain")];
        let shallow = inspect(&me, &chain, 1).unwrap();
        assert!(!shallow.pass, "{}", render(&shallow));
        assert!(
            shallow.failures[0].contains("to depth 1"),
            "{:?}",
            shallow.failures
        );
        assert!(shallow.functions_scanned.iter().all(|f| f.depth <= 1));
        let deep = inspect(&me, &chain, 2).unwrap();
        assert!(deep.pass, "{}", render(&deep));
        let leaf = deep
            .functions_scanned
            .iter()
            .find(|f| f.name == path("popcnt_leaf"))
            .unwrap();
        assert_eq!((leaf.depth, leaf.popcnt), (2, 1));
    }

    #[test]
    fn entries_sharing_a_helper_both_reach_its_popcnt() {
        let me = fixture_binary();
        let symbols = [raw(&me, "gate_entry_a"), raw(&me, "gate_entry_b")];
        let report = inspect(&me, &symbols, 1).unwrap();
        assert!(report.pass, "{}", render(&report));
        let leaf = report
            .functions_scanned
            .iter()
            .filter(|f| f.symbol == raw(&me, "popcnt_leaf"))
            .collect::<Vec<_>>();
        assert_eq!(leaf.len(), 1, "listed once: {}", render(&report));
        assert_eq!(leaf[0].entries, symbols);
    }

    #[test]
    fn entries_named_by_their_demangled_path_are_attributed() {
        let me = fixture_binary();
        let report = inspect(&me, &[path("gate_entry_a"), path("gate_chain")], 2).unwrap();
        assert!(report.pass, "{}", render(&report));
        assert_eq!(report.popcnt, 1, "the shared leaf counts once");
    }

    #[test]
    fn a_missing_symbol_fails_closed() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let report = inspect(&me, &["no_such_symbol_anywhere".to_owned()], 2).unwrap();
        assert!(!report.pass);
        assert!(
            report.failures[0].contains("no_such_symbol_anywhere"),
            "{report:?}"
        );
        assert!(report.functions_scanned.is_empty());
    }

    #[test]
    fn an_empty_symbol_list_fails_closed() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let report = inspect(&me, &[], 2).unwrap();
        assert!(!report.pass);
    }

    #[test]
    fn main_without_popcnt_fails_and_is_listed() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let report = inspect(&me, &["main".to_owned()], 2).unwrap();
        assert_eq!(report.functions_scanned[0].name, "main");
        assert_eq!(report.functions_scanned[0].depth, 0);
        assert!(!report.pass, "{}", render(&report));
    }

    #[test]
    fn garbage_is_an_error_not_a_verdict() {
        assert!(matches!(
            inspect(b"\x7fELF garbage", &[DEFAULT_SYMBOL.to_owned()], 2),
            Err(GateError::Parse(_))
        ));
    }
}
