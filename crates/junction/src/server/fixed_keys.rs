//! The hasher of the server's tables whose keys the server itself chooses: method names in
//! the route table, tool names in the tool list.
//!
//! A peer's input only looks keys up in these tables; it never adds one, so it cannot fill
//! them with colliding keys, and SipHash's defence against that would cost each lookup
//! about 200 instructions, where FNV-1a costs about 30. Tables keyed by what a peer sends
//! (request ids, session ids) keep the standard library's hasher.

use std::hash::{BuildHasherDefault, Hasher};

/// The `BuildHasher` of a table with server-chosen keys.
pub(super) type FixedKeys = BuildHasherDefault<Fnv>;

/// FNV-1a, 64 bits.
pub(super) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fnv(bytes: &[u8]) -> u64 {
        let mut hasher = Fnv::default();
        hasher.write(bytes);
        hasher.finish()
    }

    #[test]
    fn fnv_is_fnv_1a_64() {
        // The published test vectors of FNV-1a, 64 bits.
        assert_eq!(fnv(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
