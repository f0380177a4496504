//! `scripts/package` and the archive's `install.sh`, as a writer meets them:
//! the archive unpacked anywhere, installed into a fresh home with nothing
//! on `PATH`, and the installed program making and checking a manuscript.
//! (The VS Code package is installed and driven by the VS Code end-to-end
//! test, `editors/vscode/test/e2e/run.sh`.)

use std::path::Path;
use std::process::{Command, Output};

fn run(command: &mut Command) -> Output {
    let output = command.output().expect("the command runs");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8")
}

#[cfg(unix)]
#[test]
fn the_archive_installs_a_server_that_answers_in_a_fresh_home() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    run(Command::new(repo.join("scripts/package"))
        .args(["--no-vsix", "--target", "linux-x64", "--binary"])
        .arg(env!("CARGO_BIN_EXE_control-room"))
        .arg("--out")
        .arg(&out));
    let version = env!("CARGO_PKG_VERSION");
    let name = format!("control-room-{version}-linux-x64");
    let archive = out.join(format!("{name}.tar.gz"));
    assert!(archive.is_file(), "{archive:?}");

    let unpacked = work.path().join("downloads");
    std::fs::create_dir(&unpacked).unwrap();
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&unpacked));
    let folder = unpacked.join(&name);
    for part in [
        "bin/control-room",
        "install.sh",
        "README.txt",
        "EDITORS.md",
        "neovim/lua/control_room/init.lua",
        "neovim/lua/control_room/health.lua",
    ] {
        assert!(folder.join(part).is_file(), "{part} in the archive");
    }

    // A fresh home, and a PATH with no control-room on it.
    let home = work.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let installed = run(Command::new(folder.join("install.sh"))
        .env("HOME", &home)
        .env("PATH", "/usr/bin:/bin"));
    let said = stdout(&installed);
    let program = home.join(".local/bin/control-room");
    assert!(
        said.contains(&format!(
            "installed control-room {version} as {}",
            program.display()
        )),
        "{said}"
    );
    assert!(said.contains("is not on your PATH"), "{said}");
    assert!(
        said.contains(&format!(
            "export PATH=\"{}:$PATH\"",
            home.join(".local/bin").display()
        )),
        "{said}"
    );

    let answered = run(Command::new(&program).arg("--version"));
    assert_eq!(stdout(&answered).trim(), format!("control-room {version}"));
    run(Command::new(&program)
        .args(["new", "novel"])
        .current_dir(work.path()));
    let checked = run(Command::new(&program)
        .args(["check", "novel", "--format", "json"])
        .current_dir(work.path()));
    let report: serde_json::Value = serde_json::from_slice(&checked.stdout).unwrap();
    assert!(
        report["diagnostics"]
            .as_array()
            .is_some_and(|list| !list.is_empty())
    );

    // Into a folder that is on PATH, it says so, and a second install replaces the first.
    let bin = work.path().join("bin");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    for _ in 0..2 {
        let again = run(Command::new(folder.join("install.sh"))
            .arg(&bin)
            .env("HOME", &home)
            .env("PATH", &path));
        assert!(
            stdout(&again).contains("it is on your PATH"),
            "{}",
            stdout(&again)
        );
    }
    assert!(bin.join("control-room").is_file());
}

#[cfg(unix)]
#[test]
fn package_refuses_an_unknown_target_and_a_missing_binary() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir().unwrap();
    let output = Command::new(repo.join("scripts/package"))
        .args(["--no-vsix", "--target", "amiga-68k", "--out"])
        .arg(work.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown target amiga-68k"));
    let output = Command::new(repo.join("scripts/package"))
        .args([
            "--no-vsix",
            "--binary",
            "/nonexistent/control-room",
            "--out",
        ])
        .arg(work.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("no server at /nonexistent/control-room")
    );
    assert_eq!(
        std::fs::read_dir(work.path()).unwrap().count(),
        0,
        "nothing made"
    );
}
