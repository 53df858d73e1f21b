import CFIDO2

/// An attestation object's three members (WebAuthn §6.5), read by libcbor: the format's name, its statement
/// (kept as CBOR, which libfido2 reads itself) and the authenticator data.
struct AttestationObject: Equatable {
    var format: String
    var statement: [UInt8]
    /// Whether the statement is the empty map, as `none` requires.
    var statementIsEmpty: Bool
    /// The statement's `alg`, when it names one.
    var statementAlgorithm: Int?
    var authenticatorData: [UInt8]

    /// `.format` unless the bytes are exactly one definite CBOR map with a text `fmt`, a map `attStmt` and a byte
    /// string `authData`.
    init(_ bytes: [UInt8]) throws(PasskeyRejection) {
        guard !bytes.isEmpty, CBORBounds.isOneItem(bytes[...]) else { throw .format }
        var result = cbor_load_result()
        var owned = cbor_load(bytes, bytes.count, &result)
        defer { if owned != nil { cbor_decref(&owned) } }
        guard let root = owned else { throw .format }
        guard result.read == bytes.count, cbor_isa_map(root), cbor_map_is_definite(root),
              let pairs = cbor_map_handle(root)
        else { throw .format }
        var format: String?
        var statement: UnsafeMutablePointer<cbor_item_t>?
        var authenticatorData: [UInt8]?
        for pair in UnsafeBufferPointer(start: pairs, count: cbor_map_size(root)) {
            guard let key = pair.key, let value = pair.value, let name = Self.text(key) else { throw .format }
            switch name {
            case "fmt": format = Self.text(value)
            case "attStmt": statement = cbor_isa_map(value) && cbor_map_is_definite(value) ? value : nil
            case "authData": authenticatorData = Self.bytes(value)
            default: continue
            }
        }
        guard let format, let statement, let authenticatorData, let encoded = Self.encode(statement)
        else { throw .format }
        self.format = format
        self.statement = encoded
        statementIsEmpty = cbor_map_size(statement) == 0
        statementAlgorithm = Self.algorithm(in: statement)
        self.authenticatorData = authenticatorData
    }

    private static func algorithm(in map: UnsafeMutablePointer<cbor_item_t>) -> Int? {
        guard let pairs = cbor_map_handle(map) else { return nil }
        for pair in UnsafeBufferPointer(start: pairs, count: cbor_map_size(map)) {
            guard let key = pair.key, let value = pair.value, text(key) == "alg" else { continue }
            if cbor_isa_negint(value) { return -1 - Int(clamping: cbor_get_int(value)) }
            if cbor_isa_uint(value) { return Int(clamping: cbor_get_int(value)) }
        }
        return nil
    }

    private static func text(_ item: UnsafeMutablePointer<cbor_item_t>) -> String? {
        guard cbor_isa_string(item), cbor_string_is_definite(item) else { return nil }
        let count = cbor_string_length(item)
        guard count <= 64 else { return nil }
        guard count > 0 else { return "" }
        guard let start = cbor_string_handle(item) else { return nil }
        return String(validating: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    }

    private static func bytes(_ item: UnsafeMutablePointer<cbor_item_t>) -> [UInt8]? {
        guard cbor_isa_bytestring(item), cbor_bytestring_is_definite(item) else { return nil }
        let count = cbor_bytestring_length(item)
        guard count > 0, let start = cbor_bytestring_handle(item) else { return count == 0 ? [] : nil }
        return Array(UnsafeBufferPointer(start: start, count: count))
    }

    private static func encode(_ item: UnsafeMutablePointer<cbor_item_t>) -> [UInt8]? {
        var buffer: UnsafeMutablePointer<UInt8>?
        var size = 0
        let written = cbor_serialize_alloc(item, &buffer, &size)
        defer { free(buffer) }
        guard written > 0, let buffer else { return nil }
        return Array(UnsafeBufferPointer(start: buffer, count: written))
    }
}
