//! Helpers shared by the VM's integration tests: the worker count
//! (`LONA_TEST_WORKERS`), written once, in the runtime's test helpers.
#[path = "../../../lona-runtime/tests/common/mod.rs"]
mod workers;
pub use workers::workers;
