//! The header snapshot's enums, parsed: each code's name, value and the
//! header's own comment on it. The snapshot holds each enum verbatim,
//! after a line `=== TYPE from PATH (VERSION)`.

use serde::Serialize;

/// Which API or library a table belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Library {
    /// The CUDA runtime (`cudaError_t`).
    Runtime,
    /// The CUDA driver API (`CUresult`).
    Driver,
    /// cuBLAS.
    Cublas,
    /// cuDNN.
    Cudnn,
    /// cuFFT.
    Cufft,
    /// cuSOLVER.
    Cusolver,
    /// cuRAND.
    Curand,
    /// NCCL.
    Nccl,
}

impl Library {
    /// The enum type each library's table is read from.
    pub fn of_type(type_name: &str) -> Option<Library> {
        Some(match type_name {
            "cudaError" => Library::Runtime,
            "CUresult" => Library::Driver,
            "cublasStatus_t" => Library::Cublas,
            "cudnnStatus_t" => Library::Cudnn,
            "cufftResult" => Library::Cufft,
            "cusolverStatus_t" => Library::Cusolver,
            "curandStatus" => Library::Curand,
            "ncclResult_t" => Library::Nccl,
            _ => return None,
        })
    }

    /// For people.
    pub fn name(self) -> &'static str {
        match self {
            Library::Runtime => "CUDA runtime",
            Library::Driver => "CUDA driver",
            Library::Cublas => "cuBLAS",
            Library::Cudnn => "cuDNN",
            Library::Cufft => "cuFFT",
            Library::Cusolver => "cuSOLVER",
            Library::Curand => "cuRAND",
            Library::Nccl => "NCCL",
        }
    }
}

/// One enum of the snapshot.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    /// Its type, e.g. `cudaError`.
    pub type_name: String,
    /// Its library.
    pub library: Library,
    /// The header it came from, and the version the header declares.
    pub source: String,
    /// Its codes, in header order.
    pub codes: Vec<Code>,
}

/// One code of an enum.
#[derive(Debug, Clone, Serialize)]
pub struct Code {
    /// Its name, e.g. `cudaErrorIllegalAddress`.
    pub name: String,
    /// Its value.
    pub value: i64,
    /// The header's comment on it, on one line.
    pub doc: String,
}

/// Every table of a snapshot.
pub fn parse(snapshot: &str) -> Vec<Table> {
    let mut tables = Vec::new();
    for section in snapshot
        .split("\n=== ")
        .map(|s| s.trim_start_matches("=== "))
    {
        let (head, body) = section.split_once('\n').unwrap_or((section, ""));
        let type_name = head.split_whitespace().next().unwrap_or_default();
        let Some(library) = Library::of_type(type_name) else {
            continue;
        };
        let source = head
            .split_once(" from ")
            .map_or(String::new(), |(_, s)| s.trim().to_string());
        tables.push(Table {
            type_name: type_name.to_string(),
            library,
            source,
            codes: parse_block(body),
        });
    }
    tables
}

/// The codes of one `enum { ... }`, with the comment before each
/// (`/** ... */`) or after it on its line (`///<`, `//`).
fn parse_block(block: &str) -> Vec<Code> {
    let Some(open) = block.find('{') else {
        return Vec::new();
    };
    let close = block.rfind('}').unwrap_or(block.len());
    let body = &block[open + 1..close.max(open + 1)];
    let bytes = body.as_bytes();
    let mut codes: Vec<Code> = Vec::new();
    let mut pending_doc: Option<String> = None;
    // Whether a newline came since the last code: a `//` comment on the
    // code's own line is its doc; one on a line of its own is not.
    let mut same_line = false;
    let mut i = 0;
    while i < bytes.len() {
        let rest = &body[i..];
        if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            let comment = &rest[..end];
            if comment.starts_with("/**") {
                pending_doc = Some(clean_doc(&comment[3..comment.len().saturating_sub(2)]));
            } else if same_line && let Some(last) = codes.last_mut().filter(|c| c.doc.is_empty()) {
                last.doc = clean_doc(&comment[2..comment.len().saturating_sub(2)]);
            }
            i += end;
        } else if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            let text = rest[..end].trim_start_matches('/').trim_start_matches('<');
            if same_line && let Some(last) = codes.last_mut().filter(|c| c.doc.is_empty()) {
                last.doc = clean_doc(text);
            }
            i += end;
        } else if rest.starts_with('\n') {
            same_line = false;
            i += 1;
        } else if bytes[i].is_ascii_alphabetic() || bytes[i] == b'_' {
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let name = &rest[..len];
            let mut after = rest[len..].trim_start_matches([' ', '\t']);
            // `NAME CUDNN_DEPRECATED_ENUM = ...`: an attribute macro
            // between the name and its value.
            if !after.starts_with('=') {
                let attr = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                let behind = after[attr..].trim_start_matches([' ', '\t']);
                if attr > 0 && behind.starts_with('=') {
                    after = behind;
                }
            }
            i += len;
            let Some(expr) = after.strip_prefix('=') else {
                continue;
            };
            // A value may continue on the next line; it ends at `,`, `}`
            // or a comment.
            let expr_len = expr.find([',', '/', '}']).unwrap_or(expr.len());
            let value_text = expr[..expr_len].trim();
            i = (body.len() - expr.len()) + expr_len;
            let value = parse_value(value_text)
                .or_else(|| codes.iter().find(|c| c.name == value_text).map(|c| c.value));
            if let Some(value) = value {
                codes.push(Code {
                    name: name.to_string(),
                    value,
                    doc: pending_doc.take().unwrap_or_default(),
                });
                same_line = true;
            }
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    codes
}

fn parse_value(text: &str) -> Option<i64> {
    let t = text.trim_start_matches('(').trim_end_matches(')').trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return i64::from_str_radix(hex, 16).ok();
    }
    t.parse().ok()
}

/// A header comment on one line: the `*` margins, Doxygen commands and
/// `::` link marks gone.
fn clean_doc(text: &str) -> String {
    let mut words = Vec::new();
    for line in text.lines() {
        let line = line.trim().trim_start_matches('*').trim();
        for word in line.split_whitespace() {
            let word = match word {
                "\\deprecated" => "Deprecated:",
                "\\p" | "\\ref" | "\\note" | "\\brief" => continue,
                w => w,
            };
            words.push(word.replace("::", ""));
        }
    }
    let mut out = words.join(" ");
    // "::cudaFoo()" became "cudaFoo()"; keep a leading "::" inside C++ names out.
    out = out.trim().to_string();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_before_and_after_codes_values_in_hex_and_aliases_are_read() {
        let t = parse(
            "=== cudaError from x.h (v)\nenum cudaError\n{\n    /**\n     * No errors.\n     */\n    cudaSuccess = 0,\n    cudaErrorX = 0x2bd, ///< After it\n    /* a category */\n    cudaErrorY = cudaErrorX\n};\n",
        );
        assert_eq!(t.len(), 1);
        let c = &t[0].codes;
        assert_eq!(
            (c[0].name.as_str(), c[0].value, c[0].doc.as_str()),
            ("cudaSuccess", 0, "No errors.")
        );
        assert_eq!((c[1].value, c[1].doc.as_str()), (701, "After it"));
        assert_eq!(
            (c[2].name.as_str(), c[2].value, c[2].doc.as_str()),
            ("cudaErrorY", 701, "")
        );
    }
}
