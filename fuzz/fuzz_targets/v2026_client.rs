#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskwire_harness::fuzz::v2026_client::run(data));
