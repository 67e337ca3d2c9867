#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskwire_harness::fuzz::replicas::run(data));
