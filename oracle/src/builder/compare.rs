//! Which ELF sections differ between two builds that should have been identical.

use object::{Object, ObjectSection};

/// Names of the sections whose bytes, size or presence differ, in the first file's order then
/// the second's; `["<whole file: …>"]` when either file is not a parsable object file.
#[must_use]
pub fn differing_sections(first: &[u8], second: &[u8]) -> Vec<String> {
    let (a, b) = match (object::File::parse(first), object::File::parse(second)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(error), _) | (_, Err(error)) => return vec![format!("<whole file: {error}>")],
    };
    let contents = |file: &object::File<'_>| -> Vec<(String, Option<Vec<u8>>)> {
        file.sections()
            .map(|section| {
                let name = section.name().unwrap_or("<unnamed>").to_owned();
                (name, section.data().ok().map(<[u8]>::to_vec))
            })
            .collect()
    };
    let (a, b) = (contents(&a), contents(&b));
    let mut names: Vec<String> = Vec::new();
    for (name, data) in &a {
        let other = b
            .iter()
            .find(|(other, _)| other == name)
            .map(|(_, data)| data);
        if other != Some(data) && !names.contains(name) {
            names.push(name.clone());
        }
    }
    for (name, _) in &b {
        if !a.iter().any(|(other, _)| other == name) && !names.contains(name) {
            names.push(name.clone());
        }
    }
    if names.is_empty() && first != second {
        // Same sections, different bytes: headers, padding or the section table itself.
        names.push("<headers>".to_owned());
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_files_have_no_differences() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert!(differing_sections(&me, &me).is_empty());
    }

    #[test]
    fn a_changed_byte_is_attributed_to_its_section() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let file = object::File::parse(&*me).unwrap();
        let rodata = file.section_by_name(".rodata").unwrap();
        let (offset, _) = rodata.file_range().unwrap();
        let mut changed = me.clone();
        changed[usize::try_from(offset).unwrap() + 3] ^= 0xff;
        assert_eq!(
            differing_sections(&me, &changed),
            vec![".rodata".to_owned()]
        );
    }

    #[test]
    fn non_elf_input_is_reported_as_a_whole_file_difference() {
        let names = differing_sections(b"not an object", b"other");
        assert_eq!(names.len(), 1);
        assert!(names[0].starts_with("<whole file"), "{names:?}");
    }
}
