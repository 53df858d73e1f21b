/// rosterctl's own words on the contact search screen, in the session's locale; the placeholder comes from
/// the daemon's form snapshot.
struct ContactsText: Equatable {
    let label: String
    let columns: [String]
    let noMatches: String
    let searching: String
    let help: String
    let cancelled: String
    /// The daemon ended the session under the screen: a log-out elsewhere, a lock, a deletion, a revocation.
    let sessionEnded: String

    static func forLocale(_ locale: String) -> ContactsText {
        switch locale {
        case "zh-Hans":
            return ContactsText(label: "搜索", columns: ["姓名", "电话", "邮箱"], noMatches: "没有匹配的联系人", searching: "搜索中…",
                                help: "↑↓ 选择 · Enter 输出 · Esc 取消", cancelled: "已取消",
                                sessionEnded: "会话已结束（在别处退出、账户被锁定或删除）；请重新登录")
        case "vi":
            return ContactsText(label: "Tìm", columns: ["TÊN", "ĐIỆN THOẠI", "EMAIL"], noMatches: "Không có liên hệ nào khớp",
                                searching: "Đang tìm…", help: "↑↓ chọn · Enter in ra · Esc hủy", cancelled: "Đã hủy",
                                sessionEnded: "Phiên đã kết thúc (đăng xuất ở nơi khác, tài khoản bị khóa hoặc bị xóa); hãy đăng nhập lại")
        case "ko":
            return ContactsText(label: "검색", columns: ["이름", "전화", "이메일"], noMatches: "일치하는 연락처가 없습니다",
                                searching: "검색 중…", help: "↑↓ 선택 · Enter 출력 · Esc 취소", cancelled: "취소했습니다",
                                sessionEnded: "세션이 끝났습니다(다른 곳에서 로그아웃, 계정 잠금 또는 삭제). 다시 로그인하세요")
        default:
            return ContactsText(label: "Search", columns: ["NAME", "PHONE", "EMAIL"], noMatches: "No contacts match",
                                searching: "Searching…", help: "↑↓ select · Enter print · Esc cancel", cancelled: "Cancelled",
                                sessionEnded: "The session ended (logged out elsewhere, or the account was locked or deleted); log in again")
        }
    }
}
