import CSodium

/// Makes sure libsodium is initialised exactly once before any of its functions run.
enum Sodium {
    // A global `let` is initialised lazily and atomically by the Swift runtime, so concurrent
    // first callers cannot race sodium_init's CPU feature detection and RNG setup.
    private static let initialised: Bool = sodium_init() >= 0

    /// True once libsodium is usable; false only when its RNG could not be set up.
    static var isReady: Bool { initialised }
}
