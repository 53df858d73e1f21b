import CFIDO2

/// A credential's public key as rosterd stores it: its COSE algorithm and the raw key libfido2 reads back
/// (ES256: x‖y, 64 bytes; EdDSA: 32 bytes).
public struct PasskeyPublicKey: Equatable, Sendable {
    /// The COSE algorithms Roster takes, in the order `pubKeyCredParams` offers them.
    public enum Algorithm: Int, CaseIterable, Sendable {
        case es256 = -7
        case eddsa = -8

        var keyLength: Int {
            switch self {
            case .es256: 64
            case .eddsa: 32
            }
        }
    }

    public var algorithm: Algorithm
    public var raw: [UInt8]

    public init(algorithm: Algorithm, raw: [UInt8]) {
        self.algorithm = algorithm
        self.raw = raw
    }

    /// Hands libfido2 the key as its own type, for as long as `body` runs; nil when libfido2 refuses the key
    /// (a point not on the curve, a wrong length).
    func withFIDOKey<T>(_ body: (UnsafeRawPointer) -> T) -> T? {
        guard raw.count == algorithm.keyLength else { return nil }
        switch algorithm {
        case .es256:
            var owned = es256_pk_new()
            defer { es256_pk_free(&owned) }
            guard let key = owned else { return nil }
            guard es256_pk_from_ptr(key, raw, raw.count) == FIDO_OK else { return nil }
            return body(UnsafeRawPointer(key))
        case .eddsa:
            var owned = eddsa_pk_new()
            defer { eddsa_pk_free(&owned) }
            guard let key = owned else { return nil }
            guard eddsa_pk_from_ptr(key, raw, raw.count) == FIDO_OK else { return nil }
            return body(UnsafeRawPointer(key))
        }
    }
}
