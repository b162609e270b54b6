//! What each library's own string function says for each code
//! (`cudaGetErrorString`, `cuGetErrorString`, `cublasGetStatusString`,
//! `cudnnGetErrorString`, `ncclGetErrorString`), captured on the GPU
//! machine by `scripts/capture-error-strings.py`: the words users paste.

use std::collections::HashMap;

use crate::enums::Library;

/// `(library, value)` → the library's string, when it has one.
pub fn parse(tsv: &str) -> HashMap<(Library, i64), String> {
    let mut out = HashMap::new();
    for line in tsv.lines().filter(|l| !l.starts_with('#')) {
        let mut fields = line.splitn(4, '\t');
        let (Some(type_name), Some(value), Some(_name), Some(text)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let (Some(library), Ok(value)) = (Library::of_type(type_name), value.parse::<i64>()) else {
            continue;
        };
        if !text.trim().is_empty() {
            out.insert((library, value), text.trim().to_string());
        }
    }
    out
}
