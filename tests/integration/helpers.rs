//! Running the binary with a hard outer timeout, so a hang fails the test
//! instead of blocking CI.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const OUTER_TIMEOUT: Duration = Duration::from_secs(60);

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where the GPU machine's copy of the project was when the captures in
/// `sample-reports/` were made: the files they name are under it.
pub const CAPTURED_IN: &str = "/work/main";

/// How a report names a project file that a capture names (`rel`, from the
/// project's root, with its line): from the root when this checkout is
/// where the captures were made, else by its base name, as it names any
/// file outside the project (a fresh clone elsewhere, as CI's).
pub fn captured(rel: &str) -> String {
    if root() == Path::new(CAPTURED_IN) {
        rel.to_string()
    } else {
        rel.rsplit('/').next().unwrap_or(rel).to_string()
    }
}

pub fn sample(case: &str) -> PathBuf {
    root().join("sample-reports").join(case)
}

pub fn cudawatch() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cudawatch"));
    // Settings from the developer's shell would change what is tested.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CUDAWATCH_") {
            cmd.env_remove(name);
        }
    }
    // A terminal width from the developer's shell would wrap the tables.
    cmd.env_remove("CI")
        .env_remove("COLUMNS")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    cmd
}

pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Waits for `child` with the outer timeout, collecting its output.
pub fn finish(mut child: Child) -> Output {
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > OUTER_TIMEOUT {
            let _ = child.kill();
            panic!("cudawatch did not finish within {OUTER_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        code: status.code().unwrap_or(-1),
        stdout: out_thread.join().unwrap(),
        stderr: err_thread.join().unwrap(),
    }
}

pub fn run(mut cmd: impl std::borrow::BorrowMut<Command>) -> Output {
    let cmd = cmd.borrow_mut();
    finish(
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn cudawatch"),
    )
}

pub fn json(output: &Output) -> serde_json::Value {
    serde_json::from_str(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", output.stderr))
}

/// A run directory's report as `cudawatch report --format json` judges it
/// (with the checklist and verdict that `report.json` does not keep).
pub fn judged(dir: &Path) -> serde_json::Value {
    json(&run(cudawatch()
        .args(["report", "--format", "json"])
        .arg(dir)))
}

/// A copy of the tree `from` at `to` (a captured run to change on demand).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read json")).expect("parse json")
}

/// Tests that need tools from outside Rust (headless Chromium, the npm
/// tools of `tests/node`, Python's jsonschema) are `#[ignore]`d, so a plain
/// `cargo test` lists them as ignored instead of passing them silently;
/// `.ci/run` installs the tools and runs them with `--include-ignored`.
/// Run that way without the tools, they fail and say what is missing.
pub fn require_tool(what: &str, path: &Path) {
    assert!(
        path.exists(),
        "{what} is missing ({}): install it (`apt-get install chromium`, `cd tests/node && npm ci`, `pip install jsonschema`) or run without --include-ignored",
        path.display()
    );
}

/// The first site of `kind` among a JSON report's findings.
pub fn site_of_kind<'a>(report: &'a serde_json::Value, kind: &str) -> &'a serde_json::Value {
    report["findings"]
        .as_array()
        .and_then(|sites| sites.iter().find(|s| s["kind"] == kind))
        .unwrap_or_else(|| panic!("no {kind} site in {report}"))
}

/// The first site of a JSON report whose kernel name contains `fragment`.
pub fn site_with_kernel<'a>(
    report: &'a serde_json::Value,
    fragment: &str,
) -> &'a serde_json::Value {
    report["findings"]
        .as_array()
        .and_then(|sites| {
            sites
                .iter()
                .find(|s| s["kernel"].as_str().is_some_and(|k| k.contains(fragment)))
        })
        .unwrap_or_else(|| panic!("no site in a kernel named *{fragment}* in {report}"))
}

/// The checklist item `id` of a JSON report.
pub fn checklist_item(report: &serde_json::Value, id: &str) -> serde_json::Value {
    report["checklist"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == id)
        .unwrap_or_else(|| panic!("{id} in the checklist"))
        .clone()
}

/// `cudawatch`, run from `tmp` where `program` is `prog.py`, with the fake
/// torch (tests/fakes/pytorch/) and a user `sitecustomize` on PYTHONPATH.
/// The user's startup hook drops `user-sitecustomize-<stage>` into `tmp`:
/// it must still run under cudawatch's own hook. The caller adds the
/// subcommand and `-- python3 prog.py`.
pub fn with_fake_torch(tmp: &Path, program: &str) -> Command {
    let site = tmp.join("usersite");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(
        site.join("sitecustomize.py"),
        "import os\nopen(os.path.join(os.environ['MARKER_DIR'], 'user-sitecustomize-' + \
         os.environ.get('CUDAWATCH_STAGE', 'none')), 'w').close()\n\
         if os.environ.get('USER_SITE_IMPORTS_TORCH'):\n    import torch\n",
    )
    .unwrap();
    std::fs::write(tmp.join("prog.py"), program).unwrap();
    let mut cmd = cudawatch();
    cmd.current_dir(tmp)
        .env(
            "PYTHONPATH",
            format!(
                "{}:{}",
                site.display(),
                root().join("tests/fakes/pytorch").display()
            ),
        )
        .env("MARKER_DIR", tmp);
    cmd
}

/// A `bin/` folder in `tmp` holding the fake nvidia-smi alone (tests/fakes/
/// also has a python3, which must not shadow the real one), and the PATH
/// with it first: (the folder, the PATH).
pub fn fake_smi_path(tmp: &Path) -> (PathBuf, String) {
    let bin = tmp.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(
        root().join("tests/fakes/nvidia-smi"),
        bin.join("nvidia-smi"),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (bin, path)
}
