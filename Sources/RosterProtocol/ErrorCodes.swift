import RosterCore

/// The one place where a failure's reason becomes a JSON-RPC error code (the table is protocol.md §Errors).
public enum ErrorCodes {
    public static func code(for error: RosterError) -> Int {
        switch error {
        case .parseError: -32700
        case .invalidRequest, .requestTooLarge: -32600
        case .methodNotFound: -32601
        case .invalidParams: -32602
        case .notSubmittable: 1000
        case .fieldDisabled: 1001
        case .formNotOpen: 1002
        case .unknownForm: 1003
        case .unknownField: 1004
        case .invalidField: 1005
        case .taken: 1010
        case .notFound: 1011
        case .wrongPassword: 1012
        case .invalidCredentials, .unknownPasskey: 1013
        case .locked: 1014
        case .codeRequired, .passkeyNeedsCode: 1015
        case .invalidCode: 1016
        case .noEmail: 1017
        case .mailUnavailable: 1018
        case .passkeyRejected: 1019
        case .preconditionFailed: 1020
        case .rateLimited: 1023
        case .busy: 1021
        case .answerTooLarge: 1022
        case .unauthenticated: 1030
        case .forbidden: 1031
        case .storageFull: 1040
        case .storageUnavailable: 1041
        case .internal: 1099
        }
    }
}
