#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| junction_fuzz::host_config(data));
