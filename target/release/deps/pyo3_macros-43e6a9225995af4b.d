/work/h13b/target/release/deps/pyo3_macros-43e6a9225995af4b.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-macros-0.30.1/src/lib.rs

/work/h13b/target/release/deps/libpyo3_macros-43e6a9225995af4b.so: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-macros-0.30.1/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-macros-0.30.1/src/lib.rs:

# env-dep:CARGO_PKG_VERSION=0.30.1
