/// The characters a policy refuses in a field, with the ASCII ones also as a bitmap, built once when the
/// policy is, so a check of a plain ASCII name is a bit test per byte (rebuilding it from the set
/// was a sixth of a `users.check_username`).
public struct ForbiddenCharacters: Equatable, Sendable, ExpressibleByArrayLiteral {
    public let characters: Set<Character>
    private let asciiLow: UInt64
    private let asciiHigh: UInt64

    public init(_ characters: Set<Character>) {
        self.characters = characters
        var low: UInt64 = 0
        var high: UInt64 = 0
        for character in characters where character.unicodeScalars.count == 1 {
            guard let value = character.unicodeScalars.first?.value, value < 0x80 else { continue }
            if value < 64 { low |= 1 << UInt64(value) } else { high |= 1 << UInt64(value - 64) }
        }
        asciiLow = low
        asciiHigh = high
    }

    public init(_ text: String) {
        self.init(Set(text))
    }

    public init(arrayLiteral elements: Character...) {
        self.init(Set(elements))
    }

    public var isEmpty: Bool { characters.isEmpty }

    public func contains(_ character: Character) -> Bool {
        characters.contains(character)
    }

    /// Whether the ASCII byte is one of the characters (false for any byte from 0x80 up).
    public func contains(asciiByte byte: UInt8) -> Bool {
        byte < 64 ? asciiLow & (1 << UInt64(byte)) != 0
                  : byte < 128 && asciiHigh & (1 << UInt64(byte - 64)) != 0
    }
}
