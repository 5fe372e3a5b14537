//! Trap: the engine reads its configuration once and silently ignores later changes.
//! Guard: `build()` applies it once; the same configuration again is fine, a different one is
//! an error that names both; a bad environment value is an error naming the variable.
//!
//! A test binary of its own: it sets an environment variable (other tests' threads read the
//! environment when the runtime starts), and its builds must be the process's first, which the
//! shared `runtime` binary cannot promise.

use moria_runtime::{Error, Runtime};

#[test]
fn second_build_with_another_configuration_errors() {
    Runtime::builder().workers(2).build().expect("first build");
    Runtime::builder()
        .workers(2)
        .build()
        .expect("same config again");
    let err = Runtime::builder().workers(3).build().unwrap_err();
    assert!(matches!(err, Error::AlreadyConfigured { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("workers=2") && text.contains("workers=3"),
        "{text}"
    );
}

#[test]
fn bad_environment_value_names_the_variable() {
    // The variable is read only here; no other test in this binary reads the environment.
    std::env::set_var("MORIA_BLOCKING_THREADS", "lots");
    let err = Runtime::builder().from_env().unwrap_err();
    std::env::remove_var("MORIA_BLOCKING_THREADS");
    assert!(err.to_string().contains("MORIA_BLOCKING_THREADS"), "{err}");
}

#[test]
fn invalid_values_are_refused_before_anything_is_applied() {
    let err = Runtime::builder().stack_size(12345).build().unwrap_err();
    assert!(matches!(err, Error::InvalidConfig(_)), "{err}");
}
