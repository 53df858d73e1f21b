import CPWQuality
import RosterCore
import RosterRuntime

/// libpwquality, set up as systemd-homed does: the system's pwquality.conf, then our own length rules (which
/// RosterCore already enforced) so that only dictionary, username and simplicity checks decide.
/// One per worker thread: libpwquality settings are not shared between threads.
final class PasswordQualityChecker {
    /// cracklib, under libpwquality, keeps its open dictionary in static state: two checks at once on two
    /// threads corrupt each other ("index fseek failed"), so every check in the process takes turns.
    private static let cracklibTurn = Locked(())
    private let settings: OpaquePointer?

    init() {
        settings = pwquality_default_settings()
        guard let settings else { return }
        var auxiliary: UnsafeMutableRawPointer?
        _ = pwquality_read_config(settings, nil, &auxiliary)
        // Lengths and character classes are policy keys of ours; credits would double-count them.
        for (setting, value) in [(PWQ_SETTING_MIN_LENGTH, 6), (PWQ_SETTING_DIG_CREDIT, 0), (PWQ_SETTING_UP_CREDIT, 0),
                                 (PWQ_SETTING_LOW_CREDIT, 0), (PWQ_SETTING_OTH_CREDIT, 0), (PWQ_SETTING_MIN_CLASS, 0),
                                 (PWQ_SETTING_DICT_CHECK, 1), (PWQ_SETTING_USER_CHECK, 1)] {
            _ = pwquality_set_int_value(settings, setting, Int32(value))
        }
    }

    deinit { pwquality_free_settings(settings) }

    /// The check's answer for the form machine: passed, or failed with a reason that has a message.
    func check(password: Secret, username: String) -> CheckResult {
        guard let settings else { return .failed }
        var auxiliary: UnsafeMutableRawPointer?
        let score = Self.cracklibTurn.withLock { _ in
            pwquality_check(settings, password.exposed, nil, username.isEmpty ? nil : username, &auxiliary)
        }
        guard score < 0 else { return .qualityPassed }
        switch score {
        case PWQ_ERROR_CRACKLIB_CHECK:
            return .qualityFailed(reason: FieldCode.dictionaryWord.rawValue)
        case PWQ_ERROR_USER_CHECK, PWQ_ERROR_GECOS_CHECK, PWQ_ERROR_BAD_WORDS:
            return .qualityFailed(reason: FieldCode.containsUsername.rawValue)
        case PWQ_ERROR_PALINDROME, PWQ_ERROR_CASE_CHANGES_ONLY, PWQ_ERROR_ROTATED, PWQ_ERROR_TOO_SIMILAR,
             PWQ_ERROR_MAX_CONSECUTIVE, PWQ_ERROR_MAX_CLASS_REPEAT, PWQ_ERROR_MAX_SEQUENCE, PWQ_ERROR_MIN_CLASSES:
            return .qualityFailed(reason: FieldCode.tooSimple.rawValue)
        case PWQ_ERROR_MEM_ALLOC, PWQ_ERROR_FATAL_FAILURE:
            return .failed
        default:
            return .qualityFailed(reason: FieldCode.weak.rawValue)
        }
    }
}
