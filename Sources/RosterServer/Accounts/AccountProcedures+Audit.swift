import RosterCore
import RosterRuntime
import RosterStorage

// The audit log's entries as the account procedures write them (protocol.md "The audit log").
//
// RULES
//   • An entry for a change goes to the write that makes it, so both commit in one transaction or neither does.
//   • A refusal that changes nothing else (rate-limited, locked) appends its entry on its own, and is answered once
//     the entry is stored (or could not be): whoever asks the log next sees it.
//   • Every failed entry a peer can cause (a log-in, a proof, a recovery, a resume) goes through
//     `FailedLoginEntryCap` (per peer uid, or per remote a trusted gateway speaks for): one on a real account is
//     folded per requester and account (the first of a minute written, the rest counted into one entry that names
//     the account), one on no account through the requester's per-minute cap; one left out is counted, and its
//     failure still goes to the rate limit as before.
//   • An unknown account's entry has no username: the name typed is not stored, as people type passwords there.

/// The stable `reason` of a failed entry that no `RosterError` names the same way (`unknown_user`, `suppressed`);
/// the others are the error's own reason.
enum FailedEntryReason: String {
    case wrongPassword = "wrong_password"
    case unknownUser = "unknown_user"
    case invalidCode = "invalid_code"
    case rateLimited = "rate_limited"
    case locked
    /// The summary of the entries left out in a minute (by the requester's cap, or of one account's fold).
    case suppressed
    /// A passkey log-in with a credential no account holds (or not the one asked for).
    case unknownPasskey = "unknown_passkey"
    // A passkey log-in's refusal: its `passkey_rejected` why.
    case passkeyChallenge = "challenge"
    case passkeyOrigin = "origin"
    case passkeyRPID = "rp_id"
    case passkeyType = "type"
    case passkeyUserPresent = "user_present"
    case passkeySignature = "signature"
    case passkeyFormat = "format"
    case passkeyCounter = "counter"
    /// An account with TOTP logging a DAV client in with its own password (`auth.dav_login`), which needs an app
    /// password; counted as a failure whether or not the password was right.
    case appPasswordRequired = "app_password_required"
}

extension AccountProcedures {
    /// A failed entry, through the per-peer cap: nil when the cap leaves it out.
    func failedEntry(_ event: AuditEvent, username: String?, reason: FailedEntryReason, peer: AuditPeer,
                     method: LoginMethod? = nil) -> AuditRecord? {
        switch failedEntries.admit(peer.requester, account: username, peer: peer, nowMs: clock.nowMs()) {
        case .leaveOut:
            return nil
        case .write(let suppressed):
            return AuditRecord(event: event, username: username, peer: peer, outcome: .failed, reason: reason.rawValue,
                               suppressed: suppressed, method: method)
        }
    }

    /// The failed entry of a refusal that wrote nothing else, appended on its own; `then` runs once it is stored,
    /// or could not be (logged), or was left out by the cap.
    func appendFailedEntry(_ event: AuditEvent, username: String?, reason: FailedEntryReason, peer: AuditPeer,
                           method: LoginMethod? = nil, charge: QueueCharge, then: @escaping () -> Void) {
        guard let record = failedEntry(event, username: username, reason: reason, peer: peer, method: method)
        else { return then() }
        append(record, charge: charge, then: then)
    }

    /// Appends `record` on its own; `then` runs once the storage answered.
    func append(_ record: AuditRecord, charge: QueueCharge, then: @escaping () -> Void = {}) {
        storage.acting(for: charge).appendAudit(record) { [logger] result in
            if case .failure(let failure) = result {
                logger.warning("an audit entry could not be written: \(failure.rosterError.reason)",
                               [("ROSTER_EVENT", record.event.rawValue)])
            }
            then()
        }
    }

    /// The failed entry, for a proof that ended in `error` without writing anything (rate-limited, locked); nil for
    /// any other ending (a refusal records its failure with its entry, an outage is nobody's doing).
    static func unwrittenRefusal(_ error: RosterError) -> FailedEntryReason? {
        switch error {
        case .rateLimited: .rateLimited
        case .locked: .locked
        case .parseError, .invalidRequest, .requestTooLarge, .methodNotFound, .invalidParams, .unauthenticated,
             .forbidden, .unknownForm, .unknownField, .formNotOpen, .fieldDisabled, .notSubmittable, .invalidField,
             .taken, .notFound, .wrongPassword, .invalidCredentials, .codeRequired, .passkeyNeedsCode, .unknownPasskey,
             .invalidCode, .noEmail,
             .mailUnavailable, .passkeyRejected, .preconditionFailed, .busy,
             .answerTooLarge, .storageFull, .storageUnavailable, .internal:
            nil
        }
    }

    /// Writes one summary entry (event `login`, reason `suppressed`, naming the account of a fold) for each
    /// requester, and each requester and account, whose minute ended with entries left out and none written after
    /// them (housekeeping calls it).
    func sweepFailedEntries(charge: QueueCharge = .daemon) {
        for summary in failedEntries.sweep(nowMs: clock.nowMs()) {
            append(AuditRecord(event: .login, username: summary.account, peer: summary.peer, outcome: .failed,
                               reason: FailedEntryReason.suppressed.rawValue, suppressed: summary.suppressed),
                   charge: charge)
        }
    }
}

extension AuditPeer {
    /// Who this peer's limits count against: the remote a trusted gateway named (always canonical text, written by
    /// `RemoteAddress`), else its uid.
    var requester: Requester { Requester(uid: uid, remote: remote.flatMap(RemoteAddress.init(parsing:))) }
}
