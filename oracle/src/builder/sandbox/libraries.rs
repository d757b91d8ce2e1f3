//! What a compiled engine needs of the host to start: its program interpreter (the dynamic
//! loader) and the shared libraries it names, found as the loader finds them, and the bubblewrap
//! mounts that show exactly those files and nothing else of the system.
//!
//! An engine that saw the host's whole `/usr` could start another program from it, such as a
//! chess engine installed on the machine, and play its moves: its games would then depend on a
//! file that neither binary nor the register records. So a compiled engine sees only the files
//! its own ELF headers ask for, and only from the system's library directories: a name with a
//! `/`, a `RUNPATH` or an interpreter outside those directories is never followed.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ffi::OsString;
use std::io::{Error, ErrorKind};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use object::elf;
use object::read::elf::{Dyn, FileHeader, ProgramHeader};

/// Symbolic links followed in one path before it is taken for a loop, as the kernel's limit.
const MAX_LINKS: usize = 40;

/// The first bytes of every ELF file.
const ELF_MAGIC: &[u8] = b"\x7fELF";

/// The index of the class byte (32 or 64 bits) in an ELF file's identification.
const EI_CLASS: usize = 4;

/// The longest interpreter path the kernel accepts (`PATH_MAX`, its NUL included).
const MAX_INTERPRETER_BYTES: usize = 4096;

/// The longest library name a file system allows (`NAME_MAX`), its NUL not included.
const MAX_LIBRARY_NAME_BYTES: usize = 255;

/// The most libraries one file may name; real programs name a handful, and a forged file must
/// not make the oracle do unbounded work.
const MAX_LIBRARIES: usize = 256;

/// The largest executable whose headers are read (an engine with its network embedded is
/// tens of MiB); a larger file is refused rather than read into memory.
const MAX_EXECUTABLE_BYTES: u64 = 512 << 20;

/// Whether `bytes` begin like an ELF file (a compiled program), not a script.
#[must_use]
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(ELF_MAGIC)
}

/// Whether the file at `path` begins like an ELF file.
pub fn is_elf_file(path: &Path) -> std::io::Result<bool> {
    use std::io::Read;
    let mut magic = [0_u8; ELF_MAGIC.len()];
    let read = std::fs::File::open(path)?.read(&mut magic)?;
    Ok(is_elf(&magic[..read]))
}

/// The files a set of ELF executables need from the host: for each, its interpreter and the
/// libraries it names, transitively, as the paths the loader opens.
pub(crate) fn runtime_files(executables: &[&Path]) -> std::io::Result<BTreeSet<PathBuf>> {
    let mut files = BTreeSet::new();
    let mut pending: VecDeque<PathBuf> = executables.iter().map(|p| p.to_path_buf()).collect();
    let mut read = BTreeSet::new();
    while let Some(path) = pending.pop_front() {
        if !read.insert(path.clone()) {
            continue;
        }
        let bytes = read_bounded(&path).map_err(|e| invalid(&path, &e))?;
        let needs = Needs::of(&bytes).map_err(|e| invalid(&path, &e))?;
        let dirs = library_dirs(needs.machine).map_err(|e| invalid(&path, &e))?;
        if let Some(interpreter) = needs.interpreter {
            let interpreter = loader(&interpreter, &dirs).map_err(|e| invalid(&path, &e))?;
            files.insert(interpreter);
        }
        for name in needs.libraries {
            let library = find_library(&name, &dirs).map_err(|e| invalid(&path, &e))?;
            files.insert(library.clone());
            pending.push_back(library);
        }
    }
    Ok(files)
}

/// The whole file at `path`, if it is at most [`MAX_EXECUTABLE_BYTES`] long.
fn read_bounded(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_EXECUTABLE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_EXECUTABLE_BYTES {
        return Err(format!(
            "larger than {} MiB, the most an executable's headers are read from",
            MAX_EXECUTABLE_BYTES >> 20
        ));
    }
    Ok(bytes)
}

/// The bubblewrap arguments that show `files` read-only at the paths they were asked for: each
/// file bound at its real path, and every symbolic link on the way recreated as a link, so a
/// merged-/usr system (`/lib` → `usr/lib`) looks the same inside.
pub(crate) fn mounts(files: &BTreeSet<PathBuf>) -> std::io::Result<Vec<OsString>> {
    let mut links = BTreeMap::new();
    let mut real = BTreeSet::new();
    for file in files {
        let resolved = resolve(file, &mut links).map_err(|e| invalid(file, &e.to_string()))?;
        real.insert(resolved);
    }
    let mut args = Vec::new();
    for path in &real {
        args.extend([OsString::from("--ro-bind"), path.into(), path.into()]);
    }
    // Links after the binds: a bind's path has no link in it, so no link can shadow a bind.
    for (link, target) in links {
        args.extend([OsString::from("--symlink"), target.into(), link.into()]);
    }
    Ok(args)
}

/// What one ELF file asks of the loader.
#[derive(Debug, Default, PartialEq, Eq)]
struct Needs {
    /// `e_machine`, which picks the library directories.
    machine: u16,
    /// The `PT_INTERP` path, if the file is dynamically linked.
    interpreter: Option<Vec<u8>>,
    /// The `DT_NEEDED` names, each once.
    libraries: BTreeSet<Vec<u8>>,
}

impl Needs {
    /// Reads the interpreter and the needed libraries from the program headers, as the loader
    /// does (section headers, which a file may leave out or forge, are not read).
    fn of(bytes: &[u8]) -> Result<Needs, String> {
        if !is_elf(bytes) {
            return Err("not an ELF file".into());
        }
        match bytes.get(EI_CLASS) {
            Some(&elf::ELFCLASS64) => Needs::read::<elf::FileHeader64<object::Endianness>>(bytes),
            Some(&elf::ELFCLASS32) => Needs::read::<elf::FileHeader32<object::Endianness>>(bytes),
            _ => Err("an ELF file of unknown class".into()),
        }
    }

    fn read<Elf: FileHeader<Endian = object::Endianness>>(bytes: &[u8]) -> Result<Needs, String> {
        let header = Elf::parse(bytes).map_err(|e| e.to_string())?;
        let endian = header.endian().map_err(|e| e.to_string())?;
        let headers = header
            .program_headers(endian, bytes)
            .map_err(|e| e.to_string())?;
        let mut needs = Needs {
            machine: header.e_machine(endian),
            ..Needs::default()
        };
        // The kernel takes the first `PT_INTERP`, the loader the first `PT_DYNAMIC`.
        if let Some(segment) = headers
            .iter()
            .find(|segment| segment.p_type(endian) == elf::PT_INTERP)
        {
            let offset: u64 = segment.p_offset(endian).into();
            let path = c_string(bytes, offset, MAX_INTERPRETER_BYTES)
                .map_err(|why| format!("its interpreter path {why}"))?;
            needs.interpreter = Some(path.to_vec());
        }
        let mut dynamic = None;
        for segment in headers {
            if let Some(entries) = segment.dynamic(endian, bytes).map_err(|e| e.to_string())? {
                dynamic = Some(entries);
                break;
            }
        }
        let Some(entries) = dynamic else {
            return Ok(needs);
        };
        let tag = |entry: &Elf::Dyn| entry.tag32(endian);
        let strtab = entries
            .iter()
            .find(|entry| tag(entry) == Some(elf::DT_STRTAB))
            .map(|entry| entry.d_val(endian).into())
            .ok_or("its dynamic section has no string table")?;
        let strtab = file_offset::<Elf>(headers, endian, strtab)
            .ok_or("its dynamic string table lies outside every loaded segment")?;
        for entry in entries {
            match tag(entry) {
                Some(elf::DT_NEEDED) => {
                    let offset: u64 = entry.d_val(endian).into();
                    let at = strtab.saturating_add(offset);
                    let name = c_string(bytes, at, MAX_LIBRARY_NAME_BYTES + 1)
                        .map_err(|why| format!("a needed library's name {why}"))?;
                    needs.libraries.insert(name.to_vec());
                    if needs.libraries.len() > MAX_LIBRARIES {
                        return Err(format!("it names more than {MAX_LIBRARIES} libraries"));
                    }
                }
                Some(elf::DT_NULL) => break,
                _ => {}
            }
        }
        Ok(needs)
    }
}

/// The NUL-terminated string at `offset` in `bytes`, its NUL within `limit` bytes.
fn c_string(bytes: &[u8], offset: u64, limit: usize) -> Result<&[u8], &'static str> {
    let rest = usize::try_from(offset)
        .ok()
        .and_then(|start| bytes.get(start..))
        .ok_or("lies outside the file")?;
    let window = &rest[..rest.len().min(limit)];
    let end = window
        .iter()
        .position(|&b| b == 0)
        .ok_or("is too long or has no end")?;
    Ok(&window[..end])
}

/// The file offset of virtual address `address`, through the `PT_LOAD` segment that maps it.
fn file_offset<Elf: FileHeader<Endian = object::Endianness>>(
    headers: &[Elf::ProgramHeader],
    endian: object::Endianness,
    address: u64,
) -> Option<u64> {
    headers.iter().find_map(|segment| {
        let start: u64 = segment.p_vaddr(endian).into();
        let size: u64 = segment.p_filesz(endian).into();
        let inside =
            segment.p_type(endian) == elf::PT_LOAD && address >= start && address - start < size;
        let offset: u64 = segment.p_offset(endian).into();
        inside
            .then(|| offset.checked_add(address - start))
            .flatten()
    })
}

/// The system's library directories for `machine`, in the loader's order: the multiarch
/// directory first (Debian's layout), then the classic ones.
fn library_dirs(machine: u16) -> Result<Vec<PathBuf>, String> {
    let (triplet, bits) = match machine {
        elf::EM_X86_64 => ("x86_64-linux-gnu", "64"),
        elf::EM_AARCH64 => ("aarch64-linux-gnu", "64"),
        elf::EM_386 => ("i386-linux-gnu", "32"),
        other => {
            return Err(format!(
                "an ELF file for machine {other}, which has no known library directories"
            ));
        }
    };
    Ok([
        format!("/lib/{triplet}"),
        format!("/usr/lib/{triplet}"),
        format!("/lib{bits}"),
        format!("/usr/lib{bits}"),
        "/lib".to_string(),
        "/usr/lib".to_string(),
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect())
}

/// The interpreter at `path` if it is a dynamic loader (`ld*.so*`) directly in one of `dirs`.
fn loader(path: &[u8], dirs: &[PathBuf]) -> Result<PathBuf, String> {
    let path = PathBuf::from(std::ffi::OsStr::from_bytes(path));
    let name = path.file_name().map(|n| n.as_bytes()).unwrap_or_default();
    let named_as_loader = name.starts_with(b"ld") && contains(name, b".so");
    let in_dirs = path
        .parent()
        .is_some_and(|dir| dirs.iter().any(|d| d.as_path() == dir));
    if !(named_as_loader && in_dirs) {
        return Err(format!(
            "its interpreter {} is not a dynamic loader (`ld*.so*`) of the system's library \
             directories",
            path.display()
        ));
    }
    within(&path, dirs)?;
    Ok(path)
}

/// Whether `needle` occurs in `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The first file named `name` in `dirs`; an error if its real path leaves the library
/// directories.
fn find_library(name: &[u8], dirs: &[PathBuf]) -> Result<PathBuf, String> {
    let shown = String::from_utf8_lossy(name);
    if name.contains(&b'/') || !contains(name, b".so") {
        return Err(format!(
            "it needs `{shown}`, which is not the name of a shared library (`*.so*`, no `/`); \
             only libraries of the system's library directories are shown to an engine"
        ));
    }
    let name = std::ffi::OsStr::from_bytes(name);
    for dir in dirs {
        let candidate = dir.join(name);
        if candidate.is_file() {
            within(&candidate, dirs)?;
            return Ok(candidate);
        }
    }
    Err(format!(
        "it needs the library `{shown}`, which is in none of {}",
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Fails unless `path`'s real path is a file directly or deeper inside one of `dirs` (their
/// real paths): a link from a library directory to anywhere else is not followed.
fn within(path: &Path, dirs: &[PathBuf]) -> Result<(), String> {
    let real = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let inside = dirs
        .iter()
        .filter_map(|dir| std::fs::canonicalize(dir).ok())
        .any(|dir| real.starts_with(dir));
    if inside && real.is_file() {
        Ok(())
    } else {
        Err(format!(
            "{} (really {}) is not a file of the system's library directories",
            path.display(),
            real.display()
        ))
    }
}

/// The real path of `path`, recording every symbolic link met on the way (at its real
/// location, with the target it holds).
fn resolve(path: &Path, links: &mut BTreeMap<PathBuf, PathBuf>) -> std::io::Result<PathBuf> {
    let mut resolved = PathBuf::from("/");
    let mut pending: VecDeque<OsString> = VecDeque::new();
    let push_front = |pending: &mut VecDeque<OsString>, path: &Path| {
        for component in path.components().rev() {
            match component {
                Component::Normal(name) => pending.push_front(name.to_owned()),
                Component::ParentDir => pending.push_front("..".into()),
                Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            }
        }
    };
    push_front(&mut pending, path);
    let mut followed = 0;
    while let Some(name) = pending.pop_front() {
        if name == ".." {
            resolved.pop();
            continue;
        }
        let next = resolved.join(&name);
        if std::fs::symlink_metadata(&next)?.file_type().is_symlink() {
            followed += 1;
            if followed > MAX_LINKS {
                return Err(Error::new(
                    ErrorKind::InvalidData,
                    "too many symbolic links",
                ));
            }
            let target = std::fs::read_link(&next)?;
            if target.is_absolute() {
                resolved = PathBuf::from("/");
            }
            push_front(&mut pending, &target);
            links.insert(next, target);
        } else {
            resolved = next;
        }
    }
    Ok(resolved)
}

/// An error that names the executable whose headers asked for something not allowed.
fn invalid(path: &Path, message: &str) -> Error {
    Error::new(
        ErrorKind::InvalidData,
        format!("{}: {message}", path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dynamic_program_needs_its_loader_and_its_libraries_and_nothing_else() {
        let files = runtime_files(&[Path::new("/usr/bin/prlimit")]).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().any(|n| n.starts_with("ld-linux")), "{names:?}");
        assert!(names.iter().any(|n| n == "libc.so.6"), "{names:?}");
        assert!(names.iter().any(|n| n == "libsmartcols.so.1"), "{names:?}");
        assert!(
            files.iter().all(|f| f.starts_with("/lib")
                || f.starts_with("/usr/lib")
                || f.starts_with("/lib64")),
            "{files:?}"
        );
    }

    #[test]
    fn the_mounts_bind_real_files_and_recreate_the_links_on_the_way() {
        let files = runtime_files(&[Path::new("/usr/bin/prlimit")]).unwrap();
        let args: Vec<String> = mounts(&files)
            .unwrap()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let binds: Vec<&[String]> = args.chunks(3).filter(|c| c[0] == "--ro-bind").collect();
        assert!(!binds.is_empty());
        for bind in &binds {
            assert_eq!(bind[1], bind[2]);
            assert!(
                !std::fs::symlink_metadata(&bind[1])
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
        }
        let first_link = args.iter().position(|a| a == "--symlink");
        let last_bind = args.iter().rposition(|a| a == "--ro-bind");
        if let (Some(link), Some(bind)) = (first_link, last_bind) {
            assert!(bind < link, "links come after the binds: {args:?}");
        }
    }

    /// A minimal 64-bit ELF image: one `PT_LOAD` at address 0 covering the file, a
    /// `PT_INTERP` and a `PT_DYNAMIC` naming `needed` through a string table at `strtab`.
    fn image(interpreter: &[u8], needed: &[&[u8]]) -> Vec<u8> {
        let (ehsize, phsize) = (64usize, 56usize);
        let phoff = ehsize;
        let interp_at = phoff + 3 * phsize;
        let mut strings = vec![0u8];
        let mut offsets = Vec::new();
        for name in needed {
            offsets.push(strings.len() as u64);
            strings.extend_from_slice(name);
            strings.push(0);
        }
        let strtab_at = interp_at + interpreter.len() + 1;
        let dynamic_at = (strtab_at + strings.len()).next_multiple_of(8);
        let mut dynamic: Vec<(i64, u64)> = offsets
            .iter()
            .map(|&o| (i64::from(elf::DT_NEEDED), o))
            .collect();
        dynamic.push((i64::from(elf::DT_STRTAB), strtab_at as u64));
        dynamic.push((i64::from(elf::DT_NULL), 0));
        let total = dynamic_at + dynamic.len() * 16;
        let mut out = vec![0u8; total];
        out[..4].copy_from_slice(ELF_MAGIC);
        out[4] = elf::ELFCLASS64;
        out[5] = elf::ELFDATA2LSB;
        out[6] = elf::EV_CURRENT;
        out[16..18].copy_from_slice(&elf::ET_EXEC.to_le_bytes());
        out[18..20].copy_from_slice(&elf::EM_X86_64.to_le_bytes());
        out[20..24].copy_from_slice(&1u32.to_le_bytes());
        out[32..40].copy_from_slice(&(phoff as u64).to_le_bytes());
        out[52..54].copy_from_slice(&(ehsize as u16).to_le_bytes());
        out[54..56].copy_from_slice(&(phsize as u16).to_le_bytes());
        out[56..58].copy_from_slice(&3u16.to_le_bytes());
        let segments = [
            (elf::PT_LOAD, 0usize, total),
            (elf::PT_INTERP, interp_at, interpreter.len() + 1),
            (elf::PT_DYNAMIC, dynamic_at, dynamic.len() * 16),
        ];
        for (index, (kind, offset, size)) in segments.into_iter().enumerate() {
            let at = phoff + index * phsize;
            out[at..at + 4].copy_from_slice(&kind.to_le_bytes());
            for field in [8, 16, 24] {
                out[at + field..at + field + 8].copy_from_slice(&(offset as u64).to_le_bytes());
            }
            for field in [32, 40] {
                out[at + field..at + field + 8].copy_from_slice(&(size as u64).to_le_bytes());
            }
        }
        out[interp_at..interp_at + interpreter.len()].copy_from_slice(interpreter);
        out[strtab_at..strtab_at + strings.len()].copy_from_slice(&strings);
        for (index, (tag, value)) in dynamic.iter().enumerate() {
            let at = dynamic_at + index * 16;
            out[at..at + 8].copy_from_slice(&tag.to_le_bytes());
            out[at + 8..at + 16].copy_from_slice(&value.to_le_bytes());
        }
        out
    }

    fn write_image(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("engine");
        std::fs::write(&path, bytes).unwrap();
        (dir, path)
    }

    #[test]
    fn the_headers_are_read_as_the_loader_reads_them() {
        let bytes = image(
            b"/lib64/ld-linux-x86-64.so.2",
            &[b"libc.so.6", b"libm.so.6"],
        );
        let needs = Needs::of(&bytes).unwrap();
        assert_eq!(needs.machine, elf::EM_X86_64);
        assert_eq!(
            needs.interpreter.as_deref(),
            Some(&b"/lib64/ld-linux-x86-64.so.2"[..])
        );
        let names: Vec<&[u8]> = needs.libraries.iter().map(Vec::as_slice).collect();
        assert_eq!(names, [&b"libc.so.6"[..], &b"libm.so.6"[..]]);
        let (_dir, path) = write_image(&bytes);
        let files = runtime_files(&[&path]).unwrap();
        assert!(
            files.contains(Path::new("/lib64/ld-linux-x86-64.so.2")),
            "{files:?}"
        );
    }

    #[test]
    fn an_engine_cannot_ask_for_a_program_of_the_host() {
        let stockfish_like = [
            (
                image(b"/usr/bin/env", &[b"libc.so.6"]),
                "not a dynamic loader",
            ),
            (
                image(b"/lib64/ld-linux-x86-64.so.2", &[b"../../bin/env"]),
                "not the name of a shared library",
            ),
            (
                image(b"/lib64/ld-linux-x86-64.so.2", &[b"../../games/x.so"]),
                "not the name of a shared library",
            ),
            (
                image(b"/lib64/ld-linux-x86-64.so.2", &[b"/usr/bin/env"]),
                "not the name of a shared library",
            ),
            (
                image(b"/usr/lib/ld-evil.so/../../games/stockfish", &[]),
                "not a dynamic loader",
            ),
            (
                image(b"/lib64/ld-linux-x86-64.so.2", &[b"no-such-library.so.9"]),
                "in none of",
            ),
        ];
        for (bytes, expected) in stockfish_like {
            let (_dir, path) = write_image(&bytes);
            let error = runtime_files(&[&path]).unwrap_err().to_string();
            assert!(error.contains(expected), "{error}");
            assert!(error.contains(&path.display().to_string()), "{error}");
        }
    }

    #[test]
    fn forged_names_cost_bounded_work() {
        let long = vec![b'a'; 300];
        let error = Needs::of(&image(b"/lib64/ld-linux-x86-64.so.2", &[&long])).unwrap_err();
        assert!(error.contains("too long"), "{error}");
        let many: Vec<Vec<u8>> = (0..300)
            .map(|i| format!("lib{i}.so").into_bytes())
            .collect();
        let names: Vec<&[u8]> = many.iter().map(Vec::as_slice).collect();
        let error = Needs::of(&image(b"/lib64/ld-linux-x86-64.so.2", &names)).unwrap_err();
        assert!(error.contains("more than 256"), "{error}");
        let same = vec![&b"libc.so.6"[..]; 1000];
        let needs = Needs::of(&image(b"/lib64/ld-linux-x86-64.so.2", &same)).unwrap();
        assert_eq!(needs.libraries.len(), 1);
        let error = Needs::of(&image(&vec![b'/'; 5000], &[])).unwrap_err();
        assert!(error.contains("interpreter path is too long"), "{error}");
    }

    #[test]
    fn a_truncated_or_foreign_file_is_refused_not_panicked_on() {
        let whole = image(b"/lib64/ld-linux-x86-64.so.2", &[b"libc.so.6"]);
        for length in [0, 4, 20, 63, 64, 100, 200, whole.len() - 1] {
            let _ = Needs::of(&whole[..length]);
        }
        let mut foreign = whole.clone();
        foreign[18..20].copy_from_slice(&elf::EM_PPC64.to_le_bytes());
        let (_dir, path) = write_image(&foreign);
        let error = runtime_files(&[&path]).unwrap_err().to_string();
        assert!(error.contains("no known library directories"), "{error}");
        assert!(Needs::of(b"#!/bin/sh\n").is_err());
    }
}
