//! Readable names for Rust and C++ symbols, for the gate's report and for the symbols an engine
//! contract names.
//!
//! Rust 1.95 still mangles user crates in the legacy scheme (`_ZN…E`) while the shipped `std`
//! uses v0 (`_R…`, RFC 2603). Both are decoded here as far as the report needs: paths, impls,
//! generic arguments of basic and path types. C++ names (the Itanium ABI's `_Z…`, which Rust's
//! legacy scheme borrows) are decoded by `cpp_demangle`: `_ZN4Eval8evaluateERK8Position` is
//! `Eval::evaluate(Position const&)`. Anything else keeps its raw name, which is always correct,
//! only less friendly; C names are not mangled.

/// Readable form of a Rust or C++ symbol; other names (and unsupported forms) are returned
/// unchanged.
#[must_use]
pub fn demangle(name: &str) -> String {
    let decoded = if let Some(rust) = name.strip_prefix("_ZN").and_then(legacy) {
        Some(rust)
    } else if name.starts_with("_Z") {
        cpp(name)
    } else if let Some(rest) = name.strip_prefix("_R") {
        let mut parser = V0 {
            text: rest.as_bytes(),
            at: 0,
            depth: 0,
        };
        parser.path()
    } else {
        None
    };
    decoded.unwrap_or_else(|| name.to_owned())
}

/// A C++ name as `c++filt` shows it: `Eval::evaluate(Position const&)`.
fn cpp(name: &str) -> Option<String> {
    cpp_demangle::Symbol::new(name.as_bytes())
        .ok()?
        .demangle()
        .ok()
}

/// `8coherent4eval6helper17h0123456789abcdefE` → `coherent::eval::helper` (hash dropped). A name
/// without Rust's hash, or with more after its `E`, is C++'s (`_ZN4Eval8evaluateERK8Position`).
fn legacy(mut rest: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    while !rest.starts_with('E') {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let len: usize = rest[..digits].parse().ok()?;
        parts.push(rest.get(digits..digits + len)?);
        rest = &rest[digits + len..];
    }
    let is_hash = |part: &&str| {
        part.len() == 17
            && part.starts_with('h')
            && part[1..].bytes().all(|b| b.is_ascii_hexdigit())
    };
    // LLVM may append `.llvm.N` after the `E` of a Rust name.
    let ends = rest == "E" || rest.starts_with("E.");
    if !ends || !parts.last().is_some_and(is_hash) {
        return None;
    }
    parts.pop();
    Some(parts.join("::"))
}

/// A recursive-descent reader of the v0 grammar's path and type productions.
struct V0<'a> {
    text: &'a [u8],
    at: usize,
    depth: u32,
}

impl V0<'_> {
    fn next(&mut self) -> Option<u8> {
        let byte = *self.text.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.text.get(self.at) == Some(&byte);
        if found {
            self.at += 1;
        }
        found
    }

    /// `{0-9a-zA-Z} _`: `_` is 0, otherwise the digits' value plus one.
    fn base62(&mut self) -> Option<u64> {
        if self.eat(b'_') {
            return Some(0);
        }
        let mut value: u64 = 0;
        loop {
            let digit = match self.next()? {
                b'_' => return value.checked_add(1),
                byte @ b'0'..=b'9' => byte - b'0',
                byte @ b'a'..=b'z' => byte - b'a' + 10,
                byte @ b'A'..=b'Z' => byte - b'A' + 36,
                _ => return None,
            };
            value = value.checked_mul(62)?.checked_add(u64::from(digit))?;
        }
    }

    fn disambiguator(&mut self) -> Option<()> {
        if self.eat(b's') {
            self.base62()?;
        }
        Some(())
    }

    fn identifier(&mut self) -> Option<String> {
        self.disambiguator()?;
        if self.eat(b'u') {
            return None; // punycode identifiers do not occur in the engine's call graph
        }
        let start = self.at;
        while self.text.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        let len: usize = std::str::from_utf8(&self.text[start..self.at])
            .ok()?
            .parse()
            .ok()?;
        self.eat(b'_');
        let bytes = self.text.get(self.at..self.at + len)?;
        self.at += len;
        String::from_utf8(bytes.to_vec()).ok()
    }

    /// Follows a backref: parses the production at an earlier position, then returns here.
    fn backref<T>(&mut self, parse: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        let target = usize::try_from(self.base62()?).ok()?;
        if target >= self.at {
            return None;
        }
        let resume = self.at;
        self.at = target;
        let result = parse(self);
        self.at = resume;
        result
    }

    fn path(&mut self) -> Option<String> {
        self.depth += 1;
        if self.depth > 64 {
            return None;
        }
        let result = match self.next()? {
            b'C' => self.identifier(),
            b'N' => {
                let namespace = self.next()?;
                let parent = self.path()?;
                let name = self.identifier()?;
                Some(match namespace {
                    b'C' => format!("{parent}::{{closure}}"),
                    b'S' => format!("{parent}::{{shim}}"),
                    b'a'..=b'z' => format!("{parent}::{name}"),
                    _ => format!("{parent}::{{{name}}}"),
                })
            }
            b'M' => {
                self.disambiguator()?;
                self.path()?;
                Some(format!("<{}>", self.type_()?))
            }
            b'X' => {
                self.disambiguator()?;
                self.path()?;
                let self_type = self.type_()?;
                Some(format!("<{self_type} as {}>", self.path()?))
            }
            b'Y' => {
                let self_type = self.type_()?;
                Some(format!("<{self_type} as {}>", self.path()?))
            }
            b'I' => {
                let base = self.path()?;
                let mut args = Vec::new();
                while !self.eat(b'E') {
                    args.push(self.generic_arg()?);
                }
                Some(format!("{base}::<{}>", args.join(", ")))
            }
            b'B' => self.backref(Self::path),
            _ => None,
        };
        self.depth -= 1;
        result
    }

    fn generic_arg(&mut self) -> Option<String> {
        if self.eat(b'L') {
            self.base62()?;
            return Some("'_".to_owned());
        }
        self.type_()
    }

    fn type_(&mut self) -> Option<String> {
        let basic = match self.text.get(self.at)? {
            b'a' => "i8",
            b'b' => "bool",
            b'c' => "char",
            b'd' => "f64",
            b'e' => "str",
            b'f' => "f32",
            b'h' => "u8",
            b'i' => "isize",
            b'j' => "usize",
            b'l' => "i32",
            b'm' => "u32",
            b'n' => "i128",
            b'o' => "u128",
            b's' => "i16",
            b't' => "u16",
            b'u' => "()",
            b'x' => "i64",
            b'y' => "u64",
            b'z' => "!",
            b'p' => "_",
            b'R' | b'Q' => {
                let mutable = self.next()? == b'Q';
                if self.eat(b'L') {
                    self.base62()?;
                }
                let inner = self.type_()?;
                return Some(format!("&{}{inner}", if mutable { "mut " } else { "" }));
            }
            b'S' => {
                self.at += 1;
                return Some(format!("[{}]", self.type_()?));
            }
            b'B' => {
                self.at += 1;
                return self.backref(Self::type_);
            }
            _ => return self.path(),
        };
        self.at += 1;
        Some(basic.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_symbols_lose_their_hash() {
        assert_eq!(
            demangle("_ZN8coherent4eval6helper17h0123456789abcdefE"),
            "coherent::eval::helper"
        );
        assert_eq!(demangle("_ZN3bad99E"), "_ZN3bad99E");
    }

    #[test]
    fn v0_paths_impls_and_backrefs() {
        assert_eq!(
            demangle("_RNvNtCsgEmfK2I1SDS_4core9panicking9panic_fmt"),
            "core::panicking::panic_fmt"
        );
        // From the engine's build: an inherent method found through a backref.
        assert_eq!(
            demangle("_RNvMs0_NtNtNtNtCsjrHSEGnQ3l9_3std3sys4sync4once5futexNtB5_4Once4call"),
            "<std::sys::sync::once::futex::Once>::call"
        );
        assert_eq!(demangle("_RINvCs1_4test3maxyE"), "test::max::<u64>");
    }

    #[test]
    fn cpp_names_are_read_as_cpp_not_as_rust() {
        assert_eq!(
            demangle("_ZN4Eval8evaluateERK8Position"),
            "Eval::evaluate(Position const&)"
        );
        assert_eq!(
            demangle("_Z8evaluatePK8position"),
            "evaluate(position const*)"
        );
        assert_eq!(
            demangle("_ZN4Eval8evaluateILNS_5TraceE0EEEiRK8Position"),
            "int Eval::evaluate<(Eval::Trace)0>(Position const&)"
        );
    }

    #[test]
    fn other_names_are_kept() {
        assert_eq!(
            demangle("coherent_evaluate_popcnt"),
            "coherent_evaluate_popcnt"
        );
        assert_eq!(demangle("_RZ"), "_RZ");
        assert_eq!(
            demangle("_RNvB9_3foo"),
            "_RNvB9_3foo",
            "a forward backref is refused"
        );
    }
}
