import Testing
@testable import RosterCore

/// A runtime stand-in on a manual clock: fires the form's one timer when time reaches it, and records
/// every action with the millisecond it happened at, so tests assert whole histories.
private struct ThrottleDriver {
    var form = ContactsForm(throttle: .milliseconds(300))
    var now = Instant.zero
    var timers: [ContactsFormTimer: Instant] = [:]
    var history: [(ms: Int64, action: ContactsFormAction)] = []
    var revs: [Int] = []

    mutating func type(_ query: String, at ms: Int64) {
        advance(to: ms)
        let (rev, actions) = form.queryReceived(query, now: now)
        revs.append(rev)
        perform(actions)
    }

    mutating func change(at ms: Int64) {
        advance(to: ms)
        perform(form.contactsChanged(now: now))
    }

    mutating func advance(to ms: Int64) {
        let target = Instant.milliseconds(ms)
        // The window's end fires before a retry due at the same instant.
        while let (timer, deadline) = timers.filter({ $0.value <= target })
            .min(by: { ($0.value, $0.key == .window ? 0 : 1) < ($1.value, $1.key == .window ? 0 : 1) }) {
            now = deadline
            timers[timer] = nil
            perform(form.timerFired(timer, now: now))
        }
        now = target
    }

    mutating func perform(_ actions: [ContactsFormAction]) {
        for action in actions {
            history.append((now.nanoseconds / 1_000_000, action))
            switch action {
            case .schedule(let timer, let at): timers[timer] = at
            case .cancelTimer(let timer): timers[timer] = nil
            case .search, .showResults, .reportFailure: break
            }
        }
    }

    mutating func take() -> [String] {
        defer { history = [] }
        return history.map { entry in
            switch entry.action {
            case .search(let query, let token): "\(entry.ms): search \"\(query)\" #\(token)"
            case .schedule(.window, let at): "\(entry.ms): schedule \(at.nanoseconds / 1_000_000)"
            case .schedule(.retry, let at): "\(entry.ms): retry at \(at.nanoseconds / 1_000_000)"
            case .cancelTimer(.window): "\(entry.ms): cancel"
            case .cancelTimer(.retry): "\(entry.ms): cancel retry"
            case .showResults(let query, let page): "\(entry.ms): show \"\(query)\" \(page.total)"
            case .reportFailure(let error): "\(entry.ms): report \(error)"
            }
        }
    }
}

@Suite("ContactsForm throttle")
struct ContactsFormTests {
    @Test func firstInputSearchesAtOnce() {
        var form = ContactsForm(throttle: .milliseconds(300))
        let result = form.queryReceived("a", now: .milliseconds(1_000))
        #expect(result.rev == 1)
        #expect(result.actions == [.search(query: "a", token: 1), .schedule(.window, at: .milliseconds(1_300))])
    }

    @Test func quickInputsEndTheWindowWithTheLatest() {
        var driver = ThrottleDriver()
        driver.type("a", at: 0)
        driver.type("al", at: 100)
        driver.type("ali", at: 200)
        driver.type("alic", at: 250)
        driver.advance(to: 299)
        #expect(driver.take() == ["0: search \"a\" #1", "0: schedule 300"])
        driver.advance(to: 300)
        #expect(driver.take() == ["300: search \"alic\" #2", "300: schedule 600"])
        // A window that saw nothing new closes without a search, so the next input goes out at once.
        driver.advance(to: 700)
        driver.type("alice", at: 700)
        #expect(driver.take() == ["700: search \"alice\" #3", "700: schedule 1000"])
        #expect(driver.revs == [1, 2, 3, 4, 5])
    }

    @Test func everyWindowCarriesAtMostOneSearch() {
        var driver = ThrottleDriver()
        for (index, ms) in stride(from: Int64(0), through: 1_000, by: 50).enumerated() {
            driver.type("q\(index)", at: ms)
        }
        driver.advance(to: 2_000)
        // The timer at 300 fires before the input typed at 300, so that window ends with q5's search.
        #expect(driver.take() == [
            "0: search \"q0\" #1", "0: schedule 300",
            "300: search \"q5\" #2", "300: schedule 600",
            "600: search \"q11\" #3", "600: schedule 900",
            "900: search \"q17\" #4", "900: schedule 1200",
            "1200: search \"q20\" #5", "1200: schedule 1500",
        ])
    }

    @Test func equalInputIsIgnored() {
        var driver = ThrottleDriver()
        driver.type("kim", at: 0)
        driver.type("kim", at: 400)
        driver.type("kim", at: 500)
        driver.advance(to: 1_000)
        #expect(driver.take() == ["0: search \"kim\" #1", "0: schedule 300"])
        #expect(driver.revs == [1, 1, 1])
        // Typing and erasing within a window still ends on a search for the latest, which equals the first.
        driver.type("kimx", at: 1_000)
        driver.type("kim", at: 1_100)
        driver.advance(to: 1_300)
        #expect(driver.take() == ["1000: search \"kimx\" #2", "1000: schedule 1300",
                                  "1300: search \"kim\" #3", "1300: schedule 1600"])
        #expect(driver.revs == [1, 1, 1, 2, 3])
    }

    @Test func emptyQueryListsAll() {
        var form = ContactsForm(throttle: .milliseconds(300))
        #expect(form.opened(now: .zero) == [.search(query: "", token: 1)])
        // The field starts empty, so an empty input is equal to it.
        #expect(form.queryReceived("", now: .milliseconds(10)) == (0, []))
        #expect(form.queryReceived("x", now: .milliseconds(20)).actions
                == [.search(query: "x", token: 2), .schedule(.window, at: .milliseconds(320))])
        _ = form.timerFired(.window, now: .milliseconds(320))
        #expect(form.queryReceived("", now: .milliseconds(400)).actions
                == [.search(query: "", token: 3), .schedule(.window, at: .milliseconds(700))])
    }

    @Test func contactsChangedFollowsTheThrottle() {
        var driver = ThrottleDriver()
        // Outside a window: at once, and a window opens.
        driver.change(at: 0)
        #expect(driver.take() == ["0: search \"\" #1", "0: schedule 300"])
        // A burst of changes inside the window: one search at its end, for the current query.
        driver.change(at: 100)
        driver.change(at: 150)
        driver.change(at: 200)
        driver.advance(to: 600)
        #expect(driver.take() == ["300: search \"\" #2", "300: schedule 600"])
        // Typing and a change in one window: one search, for the latest query.
        driver.type("bo", at: 700)
        driver.change(at: 800)
        driver.type("bob", at: 900)
        driver.advance(to: 1_300)
        #expect(driver.take() == ["700: search \"bo\" #3", "700: schedule 1000",
                                  "1000: search \"bob\" #4", "1000: schedule 1300"])
        #expect(driver.revs == [1, 2])
    }

    @Test func earlyTimerAndCloseAndStaleTokens() {
        var form = ContactsForm(throttle: .milliseconds(300))
        _ = form.queryReceived("a", now: .zero)
        _ = form.queryReceived("ab", now: .milliseconds(100))
        #expect(form.timerFired(.window, now: .milliseconds(299)) == [])
        #expect(form.isLatest(1))
        #expect(form.timerFired(.window, now: .milliseconds(300)) == [.search(query: "ab", token: 2),
                                                             .schedule(.window, at: .milliseconds(600))])
        #expect(!form.isLatest(1) && form.isLatest(2))
        #expect(form.closed() == [.cancelTimer(.window)])
        #expect(form.closed() == [])
        #expect(form.timerFired(.window, now: .milliseconds(600)) == [])
        // An input after the deadline but before its timer fired is not held back by the old window.
        var late = ContactsForm(throttle: .milliseconds(300))
        _ = late.queryReceived("a", now: .zero)
        #expect(late.queryReceived("b", now: .milliseconds(305)).actions
                == [.search(query: "b", token: 2), .schedule(.window, at: .milliseconds(605))])
    }

    // MARK: Answers, retries and the peer

    private static func page(_ total: Int) -> ContactsPage { ContactsPage(items: [], total: total) }

    @Test func onlyTheLatestSearchsAnswerIsShownForTheQueryItSearched() {
        var driver = ThrottleDriver()
        driver.type("a", at: 0)
        driver.type("al", at: 100)
        // Token 1 searched "a"; the query is "al" now, but the window has not searched it yet.
        driver.advance(to: 120)
        driver.perform(driver.form.searchAnswered(token: 1, .success(Self.page(2)), now: .milliseconds(120)))
        driver.advance(to: 300)
        #expect(driver.form.searchAnswered(token: 1, .success(Self.page(2)), now: .milliseconds(310)) == [])
        #expect(driver.form.searchAnswered(token: 1, .failure(.internal), now: .milliseconds(310)) == [])
        #expect(driver.form.searchAnswered(token: 1, .failure(.busy(retryAfterMs: 50)), now: .milliseconds(310)) == [])
        driver.advance(to: 320)
        driver.perform(driver.form.searchAnswered(token: 2, .failure(.internal), now: .milliseconds(320)))
        #expect(driver.take() == ["0: search \"a\" #1", "0: schedule 300", "120: show \"a\" 2",
                                  "300: search \"al\" #2", "300: schedule 600", "320: report internal"])
    }

    @Test func aBusySearchIsTriedAgainAfterItsHintAsAChange() {
        var driver = ThrottleDriver()
        driver.perform(driver.form.opened(now: .zero))
        driver.perform(driver.form.searchAnswered(token: 1, .failure(.busy(retryAfterMs: 120)), now: .zero))
        driver.advance(to: 119)
        #expect(driver.take() == ["0: search \"\" #1", "0: retry at 120"])
        driver.advance(to: 120)
        #expect(driver.take() == ["120: search \"\" #2", "120: schedule 420"])
        // Inside a window, a retry is owed to the window's end; a hint of 0 waits 1 ms.
        driver.advance(to: 130)
        driver.perform(driver.form.searchAnswered(token: 2, .failure(.busy(retryAfterMs: 0)), now: .milliseconds(130)))
        driver.advance(to: 131)
        driver.advance(to: 1_000)
        #expect(driver.take() == ["130: retry at 131", "420: search \"\" #3", "420: schedule 720"])
        // A second refusal moves the retry to its own hint.
        driver.perform(driver.form.searchAnswered(token: 3, .failure(.busy(retryAfterMs: 500)), now: .milliseconds(1_000)))
        driver.advance(to: 1_010)
        driver.perform(driver.form.searchAnswered(token: 3, .failure(.busy(retryAfterMs: 100)), now: .milliseconds(1_010)))
        #expect(driver.form.timerFired(.retry, now: .milliseconds(1_109)) == [])
        driver.advance(to: 2_000)
        #expect(driver.take() == ["1000: retry at 1500", "1010: retry at 1110", "1110: search \"\" #4",
                                  "1110: schedule 1410"])
        #expect(driver.form.timerFired(.retry, now: .milliseconds(1_500)) == [])
    }

    @Test func aSearchSkippedWhileThePeerWasBehindIsOwedOnceItHasRead() {
        var driver = ThrottleDriver()
        #expect(driver.form.outputDrained(now: .zero) == [])
        driver.perform(driver.form.opened(now: .zero))
        driver.change(at: 10)
        #expect(driver.form.peerWasBehind() == [])
        #expect(driver.form.peerWasBehind() == [])
        driver.advance(to: 900)
        _ = driver.take()
        driver.perform(driver.form.outputDrained(now: .milliseconds(900)))
        driver.perform(driver.form.outputDrained(now: .milliseconds(900)))
        driver.advance(to: 2_000)
        #expect(driver.take() == ["900: search \"\" #3", "900: schedule 1200"])
        // Owed inside a window: paid at its end, within the throttle.
        driver.change(at: 2_000)
        _ = driver.take()
        _ = driver.form.peerWasBehind()
        driver.perform(driver.form.outputDrained(now: .milliseconds(2_100)))
        driver.advance(to: 3_000)
        #expect(driver.take() == ["2300: search \"\" #5", "2300: schedule 2600"])
    }

    @Test func closingCancelsBothTimersAndForgetsWhatWasOwed() {
        var form = ContactsForm(throttle: .milliseconds(300))
        _ = form.queryReceived("a", now: .zero)
        _ = form.searchAnswered(token: 1, .failure(.busy(retryAfterMs: 50)), now: .milliseconds(10))
        _ = form.peerWasBehind()
        #expect(form.closed() == [.cancelTimer(.window), .cancelTimer(.retry)])
        #expect(form.closed() == [])
        #expect(form.outputDrained(now: .milliseconds(20)) == [])
        #expect(form.timerFired(.retry, now: .milliseconds(60)) == [])
        #expect(form.timerFired(.window, now: .milliseconds(300)) == [])
    }
}
