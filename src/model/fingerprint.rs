//! Content fingerprints: FNV-1a, 64 bits, stable across versions and
//! machines (the persistent index and the journal store them). Not a
//! security measure.

/// FNV-1a, 64 bits: a stable content fingerprint (not a security measure).
pub fn fingerprint(bytes: &[u8]) -> u64 {
    fingerprint_extend(0xcbf2_9ce4_8422_2325, bytes)
}

/// A fingerprint `h` continued over more bytes (one over several parts).
pub fn fingerprint_extend(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// FNV-1a as a hasher: terms are short and trusted (they come from the
/// store), and interning hashes millions of them on a cold index, where
/// SipHash's DoS resistance costs more than it is worth.
#[derive(Debug, Clone, Default)]
pub struct FnvBuild;

/// The FNV-1a hasher state.
#[derive(Debug, Clone)]
pub struct Fnv(u64);

impl std::hash::BuildHasher for FnvBuild {
    type Hasher = Fnv;
    fn build_hasher(&self) -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}
