import CFIDO2

/// libfido2, initialised once before its first use (fido_init must precede every other call).
enum FIDOLibrary {
    // A global `let` is initialised lazily and atomically, so concurrent first verifications cannot race it.
    private static let initialised: Bool = {
        fido_init(0)
        return true
    }()

    static func ready() { _ = initialised }
}
