//! The parts of an ELF binary the gate reads: function symbols and the bytes at an address.

use std::collections::BTreeMap;

use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};

use super::demangle::demangle;

/// A function symbol of the binary's symbol table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// The raw (mangled) symbol name.
    pub name: String,
    /// Start address.
    pub address: u64,
    /// Size in bytes.
    pub size: u64,
}

/// A parsed binary: its function symbols by address and access to its mapped bytes.
pub struct Binary<'data> {
    file: object::File<'data>,
    by_address: BTreeMap<u64, Function>,
}

impl<'data> Binary<'data> {
    /// Parses `bytes` as an object file and indexes its function symbols (`.symtab`).
    pub fn parse(bytes: &'data [u8]) -> Result<Self, object::Error> {
        let file = object::File::parse(bytes)?;
        let mut by_address = BTreeMap::new();
        for symbol in file.symbols() {
            if symbol.kind() != SymbolKind::Text || symbol.size() == 0 || !symbol.is_definition() {
                continue;
            }
            let Ok(name) = symbol.name() else { continue };
            by_address
                .entry(symbol.address())
                .or_insert_with(|| Function {
                    name: name.to_owned(),
                    address: symbol.address(),
                    size: symbol.size(),
                });
        }
        Ok(Self { file, by_address })
    }

    /// Whether the file is a 64-bit x86 object (the only architecture the gate decodes).
    #[must_use]
    pub fn is_x86_64(&self) -> bool {
        self.file.architecture() == object::Architecture::X86_64
    }

    /// Whether the binary has any function symbols at all (a stripped one has none).
    #[must_use]
    pub fn has_symbols(&self) -> bool {
        !self.by_address.is_empty()
    }

    /// The function whose raw or demangled name is exactly `name`.
    #[must_use]
    pub fn function_named(&self, name: &str) -> Option<&Function> {
        self.by_address
            .values()
            .find(|function| function.name == name || demangle(&function.name) == name)
    }

    /// Every function's readable name (demangled), in address order.
    pub fn function_names(&self) -> impl Iterator<Item = String> + '_ {
        self.by_address
            .values()
            .map(|function| demangle(&function.name))
    }

    /// The function that starts at `address`.
    #[must_use]
    pub fn function_at(&self, address: u64) -> Option<&Function> {
        self.by_address.get(&address)
    }

    /// Up to `len` bytes of initialised data at virtual address `address`, if mapped.
    #[must_use]
    pub fn bytes_at(&self, address: u64, len: u64) -> Option<&'data [u8]> {
        self.file.sections().find_map(|section| {
            let start = section.address();
            let end = start.checked_add(section.size())?;
            if address < start || address >= end {
                return None;
            }
            section
                .data_range(address, len.min(end - address))
                .ok()
                .flatten()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_its_own_main_and_code_bytes() {
        let bytes = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let binary = Binary::parse(&bytes).unwrap();
        assert!(binary.is_x86_64());
        assert!(binary.has_symbols());
        let main = binary.function_named("main").unwrap();
        assert_eq!(binary.function_at(main.address), Some(main));
        let code = binary.bytes_at(main.address, main.size).unwrap();
        assert_eq!(code.len() as u64, main.size);
    }
}
