/work/h13b/target/release/deps/num_integer-aa719dc34fba642c.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/num-integer-0.1.47/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/num-integer-0.1.47/src/roots.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/num-integer-0.1.47/src/average.rs

/work/h13b/target/release/deps/libnum_integer-aa719dc34fba642c.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/num-integer-0.1.47/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/num-integer-0.1.47/src/roots.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/num-integer-0.1.47/src/average.rs

/work/h13b/target/release/deps/libnum_integer-aa719dc34fba642c.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/num-integer-0.1.47/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/num-integer-0.1.47/src/roots.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/num-integer-0.1.47/src/average.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/num-integer-0.1.47/src/lib.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/num-integer-0.1.47/src/roots.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/num-integer-0.1.47/src/average.rs:
