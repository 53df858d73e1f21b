import RosterCore
@testable import RosterCrypto
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// `auth.login`'s second step on the runtime side: the seal opened with the key file's subkey, the code checked by
/// liboath at the injected wall clock, the step made single-use by the storage.
@Suite("TOTP log-in")
struct TOTPLogInTests {
    let secret: [UInt8] = Array("12345678901234567890".utf8)

    /// alice1 / secret1 with a confirmed TOTP secret sealed under `key`, its last accepted step `lastStep`.
    private func harness(key: SecretKey = testSecrets.totpSeal, lastStep: Int64 = 0,
                         policy: Policy = .seed) throws -> (FormRunnerHarness, AccountID) {
        let harness = FormRunnerHarness(policy: policy)
        var created: Account?
        harness.storage.acting(for: .daemon).createAccount(NewAccount(username: "alice1", display: "alice1", email: nil,
                                                                      passwordHash: FakePasswordWork.hash(of: "secret1"))) { created = try? $0.get() }
        let account = try #require(created)
        harness.storage.acting(for: .daemon).storePendingTOTP(of: account.id,
                                                              sealed: try SecretBox.seal(secret, key: key)) { _ in }
        harness.storage.acting(for: .daemon).confirmTOTP(of: account.id, step: lastStep) { _ in }
        return (harness, account.id)
    }

    private func logIn(_ harness: FormRunnerHarness, password: String = "secret1",
                       code: String?) -> Result<LogIn<Account>.SignedIn, RosterError>? {
        var outcome: Result<LogIn<Account>.SignedIn, RosterError>?
        harness.accounts.logIn(LogInRequest(typedIdentifier: "alice1", password: Secret(password), policy: harness.policy,
                                            code: code),
                               peer: harness.session.peer, charge: harness.session.queueCharge) { outcome = $0 }
        harness.releaseEverything()
        return outcome
    }

    private func lastStep(_ harness: FormRunnerHarness, _ id: AccountID) -> Int64? {
        var step: Int64?
        harness.storage.acting(for: .daemon).security(of: id) { step = (try? $0.get())?.totp?.lastStep }
        return step
    }

    private var now: Int64 { FormRunnerHarness().clock.nowMs() / 1_000 }

    @Test func withoutACodeTheRightPasswordIsAskedForOneAndNothingIsRecorded() throws {
        let (harness, _) = try harness()
        #expect(logIn(harness, code: nil)?.map(\.account.username) == .failure(.codeRequired))
        #expect(!harness.storage.calls.contains(.recordFailure))
        #expect(logIn(harness, password: "wrong12", code: nil)?.map(\.account.username) == .failure(.wrongPassword))
    }

    @Test func oneStepEitherSideIsAcceptedAndTwoAreNot() throws {
        for offset in -2...2 {
            let (harness, id) = try harness()
            let code = try #require(TOTP.generate(secret: secret, nowUnix: now + Int64(offset) * 30))
            let outcome = logIn(harness, code: code)
            if abs(offset) <= 1 {
                #expect(outcome?.map(\.account.username) == .success("alice1"), "offset \(offset)")
                #expect(lastStep(harness, id) == now / 30 + Int64(offset))
            } else {
                #expect(outcome?.map(\.account.username) == .failure(.invalidCode), "offset \(offset)")
                #expect(harness.storage.calls.filter { $0 == .recordFailure }.count == 1)
                #expect(lastStep(harness, id) == 0)
            }
        }
    }

    @Test func aCodeWorksOnceAndNoEarlierStepAfterIt() throws {
        let (harness, id) = try harness()
        let current = try #require(TOTP.generate(secret: secret, nowUnix: now))
        let previous = try #require(TOTP.generate(secret: secret, nowUnix: now - 30))
        #expect(logIn(harness, code: current)?.map(\.account.username) == .success("alice1"))
        #expect(logIn(harness, code: current)?.map(\.account.username) == .failure(.invalidCode))
        #expect(logIn(harness, code: previous)?.map(\.account.username) == .failure(.invalidCode))
        #expect(harness.storage.calls.filter { $0 == .recordFailure }.count == 2)
        #expect(lastStep(harness, id) == now / 30)
        // Once the clock moves on, the next step's code works.
        harness.clock.advance(byMs: 30_000)
        let next = try #require(TOTP.generate(secret: secret, nowUnix: now + 30))
        #expect(logIn(harness, code: next)?.map(\.account.username) == .success("alice1"))
    }

    /// Two log-ins with one code, both reading the seal before either used it: the storage's atomic step update lets
    /// exactly one through.
    @Test func twoLogInsRacingWithOneCodeHaveOneWinner() throws {
        let (harness, id) = try harness()
        harness.storage.answering = .onRelease
        let code = try #require(TOTP.generate(secret: secret, nowUnix: now))
        var outcomes: [Result<String, RosterError>] = []
        for _ in 0..<2 {
            harness.accounts.logIn(LogInRequest(identifier: "alice1", password: Secret("secret1"), code: code),
                                   peer: harness.session.peer, charge: harness.session.queueCharge) {
                outcomes.append($0.map(\.account.username))
            }
        }
        harness.releaseEverything()
        #expect(outcomes.count == 2)
        #expect(outcomes.filter { $0 == .success("alice1") }.count == 1)
        #expect(outcomes.filter { $0 == .failure(.invalidCode) }.count == 1)
        #expect(harness.storage.calls.filter { $0 == .acceptTOTPStep }.count == 2)
        harness.storage.answering = .immediately
        #expect(lastStep(harness, id) == now / 30)
    }

    @Test func wrongCodesCountTowardTheLimit() throws {
        var policy = Policy.seed
        policy.rateLimitBurst = 2
        let (harness, _) = try harness(policy: policy)
        #expect(logIn(harness, code: "000000")?.map(\.account.username) == .failure(.invalidCode))
        #expect(logIn(harness, code: "000001")?.map(\.account.username) == .failure(.invalidCode))
        let right = try #require(TOTP.generate(secret: secret, nowUnix: now))
        guard case .failure(.rateLimited) = logIn(harness, code: right) else {
            Issue.record("two wrong codes must fill a burst of two")
            return
        }
    }

    @Test func aSealUnderAnotherKeyIsAnInternalErrorNotTheUsersFailure() throws {
        let (harness, _) = try harness(key: try SecretKey.random())
        let code = try #require(TOTP.generate(secret: secret, nowUnix: now))
        #expect(logIn(harness, code: code)?.map(\.account.username) == .failure(.internal))
        #expect(!harness.storage.calls.contains(.recordFailure))
    }
}
