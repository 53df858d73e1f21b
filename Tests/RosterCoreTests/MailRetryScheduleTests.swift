import RosterCore
import Testing

/// The outbox's backoff on explicit times: a minute, doubling, at most an hour, for a day from the queued time.
@Suite("Mail retry schedule")
struct MailRetryScheduleTests {
    let schedule = MailRetrySchedule.standard
    let queued: Int64 = 1_800_000_000_000
    let minute: Int64 = 60_000

    @Test func theStepDoublesFromAMinuteAndStopsAtAnHour() {
        #expect((1...9).map { schedule.stepMs(afterAttempt: $0) / minute } == [1, 2, 4, 8, 16, 32, 60, 60, 60])
        #expect(schedule.stepMs(afterAttempt: 0) == minute)
        #expect(schedule.stepMs(afterAttempt: Int.max) == 60 * minute)
        #expect(MailRetrySchedule.handOffTimeout == .seconds(30))
    }

    @Test func aFailureIsTriedAgainAfterItsStepFromNow() {
        #expect(schedule.afterFailure(attempt: 1, queuedAtMs: queued, nowMs: queued + 5) == .retry(atMs: queued + 5 + minute))
        #expect(schedule.afterFailure(attempt: 3, queuedAtMs: queued, nowMs: queued + 10 * minute)
                == .retry(atMs: queued + 14 * minute))
        #expect(schedule.afterFailure(attempt: 12, queuedAtMs: queued, nowMs: queued + 10 * 60 * minute)
                == .retry(atMs: queued + 11 * 60 * minute))
    }

    /// The last step is cut to end with the window, so the last try is at 24 h exactly; a failure then gives up.
    @Test func theLastTryFallsAtTheWindowsEndAndAFailureThenGivesUp() {
        let end = queued + 24 * 60 * minute
        #expect(schedule.afterFailure(attempt: 30, queuedAtMs: queued, nowMs: end - 10 * minute) == .retry(atMs: end))
        #expect(schedule.afterFailure(attempt: 30, queuedAtMs: queued, nowMs: end - 1) == .retry(atMs: end))
        #expect(schedule.afterFailure(attempt: 31, queuedAtMs: queued, nowMs: end) == .giveUp)
        #expect(schedule.afterFailure(attempt: 1, queuedAtMs: queued, nowMs: end + 1) == .giveUp)
    }

    /// A whole day of failures, each at the time it was set for: the tries a mail gets before it is failed.
    @Test func aDayOfFailuresGivesTheseTries() {
        var now = queued
        var tries: [Int64] = []
        var attempt = 1
        while case .retry(let next) = schedule.afterFailure(attempt: attempt, queuedAtMs: queued, nowMs: now) {
            tries.append((next - queued) / minute)
            now = next
            attempt += 1
        }
        #expect(Array(tries.prefix(8)) == [1, 3, 7, 15, 31, 63, 123, 183])
        #expect(tries.last == Int64(24 * 60))
        #expect(attempt == 30, "a hand-off at queueing and 29 retries, the last at 24 h, then failed")
    }

    @Test func aClockThatSteppedBackCountsAsNoTimePassed() {
        #expect(schedule.afterFailure(attempt: 1, queuedAtMs: queued, nowMs: queued - 3_600_000)
                == .retry(atMs: queued + minute))
    }
}
