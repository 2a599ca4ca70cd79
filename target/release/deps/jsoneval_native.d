/work/h13b/target/release/deps/jsoneval_native.d: src/lib.rs src/canonical.rs src/flatten.rs src/node.rs src/python.rs

/work/h13b/target/release/deps/libjsoneval_native.so: src/lib.rs src/canonical.rs src/flatten.rs src/node.rs src/python.rs

src/lib.rs:
src/canonical.rs:
src/flatten.rs:
src/node.rs:
src/python.rs:
