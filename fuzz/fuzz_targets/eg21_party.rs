#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| votum_fuzz::eg21_party(data));
