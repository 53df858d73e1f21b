import RosterCore

/// What one connection has told us about itself: language, timing overrides, and (later) who logged in.
final class Session {
    var locale: RosterLocale = .default
    /// `session.hello` overrides; nil follows the configuration, including after a reload.
    var debounceOverride: Duration?
    var throttleOverride: Duration?
    var client: String?
    var greeted = false

    func debounce(under policy: Policy) -> Duration { debounceOverride ?? policy.debounce }
    func throttle(under policy: Policy) -> Duration { throttleOverride ?? policy.throttle }
}
