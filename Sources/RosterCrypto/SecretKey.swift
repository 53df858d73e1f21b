import CSodium

/// 32 bytes of key material, kept out of Swift's copyable arrays and wiped when the last reference goes.
public final class SecretKey: @unchecked Sendable {
    /// Every key here is 32 bytes (secretbox, keyed BLAKE2b-256, the KDF's master and subkeys).
    public static let length = 32

    // Written once in init and never again, which is what makes sharing it across threads safe.
    private let storage: UnsafeMutablePointer<UInt8>

    /// A key whose 32 bytes `fill` writes (they start zeroed).
    init(filling fill: (UnsafeMutablePointer<UInt8>) -> Void) {
        storage = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.length)
        storage.initialize(repeating: 0, count: Self.length)
        fill(storage)
    }

    /// A copy of `bytes`, or nil unless there are exactly 32 of them (tests and fixtures; the daemon reads its key file).
    public convenience init?(bytes: [UInt8]) {
        guard bytes.count == Self.length else { return nil }
        self.init { target in target.update(from: bytes, count: Self.length) }
    }

    /// A fresh random key from libsodium's CSPRNG.
    public static func random() throws(CryptoError) -> SecretKey {
        guard Sodium.isReady else { throw .sodiumUnavailable }
        return SecretKey { target in randombytes_buf(target, length) }
    }

    /// Runs `body` on the key's 32 bytes; the pointer must not escape.
    func withBytes<R>(_ body: (UnsafePointer<UInt8>) throws -> R) rethrows -> R {
        try body(storage)
    }

    deinit {
        sodium_memzero(storage, Self.length)
        storage.deallocate()
    }
}

extension SecretKey: CustomStringConvertible {
    // Keeps the bytes out of any log line that interpolates a key.
    public var description: String { "SecretKey(redacted)" }
}
