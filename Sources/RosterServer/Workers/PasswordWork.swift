import RosterCore
import RosterRuntime
import RosterStorage

/// What a password's verdict means to a log-in, whichever account type the storage hands out.
typealias PasswordVerification = LogIn<Account>.Verification

/// The CPU work behind accounts, which never runs on the loop: Argon2id, and libpwquality's verdict. Every
/// completion runs on the loop thread, once.
protocol PasswordWork: AnyObject {
    /// The Argon2id string of a normalized password, at the parameters in force.
    func hash(_ password: Secret, charge: QueueCharge, completion: @escaping (Result<String, RosterError>) -> Void)

    /// Verifies against `hash`, or against a dummy of the same cost when there is none, and re-hashes an
    /// accepted password whose hash was made with other parameters.
    func verify(_ password: Secret, against hash: String?, charge: QueueCharge,
                completion: @escaping (Result<PasswordVerification, RosterError>) -> Void)

    /// libpwquality's answer for the register form's check; `.failed` when it could not be asked.
    func checkQuality(_ password: Secret, username: String, charge: QueueCharge,
                      completion: @escaping (CheckResult) -> Void)
}
