/work/h13b/target/release/libjsoneval_native.so: /work/h13b/src/canonical.rs /work/h13b/src/flatten.rs /work/h13b/src/lib.rs /work/h13b/src/node.rs /work/h13b/src/python.rs
