#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| junction_fuzz::sse(data));
