import Testing
@testable import RosterCore

@Suite("Registration procedure")
struct RegistrationTests {
    typealias Run = Registration<TestAccount>

    let bob = TestAccount(id: 3, username: "bob123")
    let token = IssuedToken(bearer: "bearer", hash: [9])

    func run(_ registration: inout Run, _ facts: [Run.Fact]) -> [Run.Effect] {
        var effects = registration.start()
        for fact in facts { effects += registration.step(fact) }
        return effects
    }

    /// `users.register` judged by the register rules, as the form judges them.
    func judging(_ username: String, _ password: String, email: String = "", policy: Policy = .seed) -> Run {
        Run.judging(username: username, password: Secret(password), email: email, policy: policy)
    }

    @Test func aMethodRegistrationChecksTheNameHashesCreatesAndAnnouncesWithoutAToken() {
        var registration = judging("ＢＯＢ１２３", "secret1")
        let effects = run(&registration, [.checked(.available), .hashed(passwordHash: "$argon2id$h"), .created(bob)])
        #expect(effects == [
            .check(.usernameAvailable(canonical: "bob123")),
            .hash(password: Secret("secret1")),
            .create(username: "bob123", email: nil, passwordHash: "$argon2id$h"),
            .announce(bob),
            .finish(.success(.init(account: bob, token: nil))),
        ])
        #expect(registration.step(.created(bob)) == [])
    }

    @Test func theFormsRegistrationStartsAtTheHashAndIssuesAToken() {
        var registration = Run(judged: RegistrationRequest(username: "bob123", password: Secret("secret1"),
                                                           email: "bob@example.com"), issuesToken: true)
        let effects = run(&registration, [.hashed(passwordHash: "$argon2id$h"), .created(bob), .tokenIssued(token)])
        #expect(effects == [
            .hash(password: Secret("secret1")),
            .create(username: "bob123", email: "bob@example.com", passwordHash: "$argon2id$h"),
            .announce(bob),
            .issueToken(for: bob),
            .finish(.success(.init(account: bob, token: .success(token)))),
        ])
    }

    @Test func aTokenThatCannotBeStoredDoesNotUndoTheAccount() {
        var registration = Run(judged: RegistrationRequest(username: "bob123", password: Secret("secret1"), email: nil),
                               issuesToken: true)
        let effects = run(&registration, [.hashed(passwordHash: "h"), .created(bob), .failed(.storageFull)])
        #expect(effects.last == .finish(.success(.init(account: bob, token: .failure(.storageFull)))))
    }

    @Test func theStoragesAnswerEndsIt() {
        for error in [RosterError.taken(field: "email"), .storageFull, .busy(retryAfterMs: 40)] {
            var registration = judging("bob123", "secret1")
            #expect(run(&registration, [.checked(.available), .hashed(passwordHash: "h"), .failed(error)]).last
                    == .finish(.failure(error)))
        }
        var registration = judging("bob123", "secret1")
        #expect(run(&registration, [.checked(.available), .failed(.busy(retryAfterMs: 40))]).last
                == .finish(.failure(.busy(retryAfterMs: 40))))
    }

    /// A check the database could not be reached for answers as the write would (`storage_unavailable`, its hint
    /// kept), for the username and the email alike; any other failed check reads as the field's `check_failed`.
    @Test func aCheckDuringAnOutageAnswersStorageUnavailable() {
        let outage = RosterError.storageUnavailable(retryAfterMs: 700)
        var byName = judging("bob123", "secret1")
        #expect(run(&byName, [.failed(outage)]).last == .finish(.failure(outage)))
        var byEmail = judging("bob123", "secret1", email: "bob@example.com")
        #expect(run(&byEmail, [.checked(.available), .failed(outage)]).last == .finish(.failure(outage)))
        var other = judging("bob123", "secret1")
        #expect(run(&other, [.failed(.internal)]).last
                == .finish(.failure(.invalidField(field: "username", code: "check_failed"))))
    }

    /// The first field that fails is the answer, in the form's order; a taken username wins over a short
    /// password because the name is judged (and checked) first.
    @Test func theFirstRefusedFieldIsTheAnswer() {
        var short = judging("bob123", "abc")
        #expect(run(&short, [.checked(.taken)]).last == .finish(.failure(.taken(field: "username"))))
        short = judging("bob123", "abc")
        #expect(run(&short, [.checked(.available)]).last
                == .finish(.failure(.invalidField(field: "password", code: "too_short"))))
        var empty = judging("", "secret1")
        #expect(run(&empty, []) == [.finish(.failure(.invalidField(field: "username", code: "empty")))])
        var spaced = judging("bob 123", "secret1")
        #expect(run(&spaced, []) == [.finish(.failure(.invalidField(field: "username", code: "forbidden_characters")))])
        var failed = judging("bob123", "secret1")
        #expect(run(&failed, [.checked(.failed)]).last
                == .finish(.failure(.invalidField(field: "username", code: "check_failed"))))
        var badEmail = judging("bob123", "secret1", email: "not-an-email")
        #expect(run(&badEmail, [.checked(.available)]).last
                == .finish(.failure(.invalidField(field: "email", code: "invalid_email"))))
        var noPassword = judging("bob123", "")
        #expect(run(&noPassword, [.checked(.available)]).last
                == .finish(.failure(.invalidField(field: "password", code: "empty"))))
    }

    @Test func anEmailIsCheckedAfterTheNameAndATakenOneNamesItsField() {
        var registration = judging("bob123", "secret1", email: "Bob@Example.com")
        let effects = run(&registration, [.checked(.available), .checked(.taken)])
        #expect(effects == [
            .check(.usernameAvailable(canonical: "bob123")),
            .check(.emailAvailable(canonical: "bob@example.com")),
            .finish(.failure(.taken(field: "email"))),
        ])
    }

    @Test func qualityIsCheckedLastOnTheNormalizedPassword() {
        var registration = judging("bob123", "Correct horse\u{00A0}battery staple", email: "bob@example.com",
                                   policy: .hardened)
        let effects = run(&registration, [.checked(.available), .checked(.available),
                                          .checked(.qualityFailed(reason: "dictionary_word"))])
        #expect(effects == [
            .check(.usernameAvailable(canonical: "bob123")),
            .check(.emailAvailable(canonical: "bob@example.com")),
            .check(.passwordQuality(password: Secret("Correct horse battery staple"), username: "bob123")),
            .finish(.failure(.invalidField(field: "password", code: "dictionary_word"))),
        ])
    }

    /// The form and the method share one rulebook: every field evaluates the same on both sides.
    @Test func theFormJudgesByTheSameRules() {
        for policy in [Policy.seed, .hardened] {
            for name in ["ab", "bob 123", "bob123", "ＢＯＢ１２３", String(repeating: "x", count: 400)] {
                var driver = FormDriver(RegisterForm(policy: policy, debounce: .milliseconds(500)))
                _ = try? driver.type(.username, name)
                driver.advance(to: 500)
                let expected: FormAction = switch RegisterRules.username(name, policy: policy) {
                case .settled(let verdict): fieldEvent(.username, verdict.state, verdict.code, rev: 1)
                case .check(let check): .startCheck(check, token: CheckToken(1))
                }
                #expect(driver.take().contains(expected), "\(name)")
            }
        }
    }
}
