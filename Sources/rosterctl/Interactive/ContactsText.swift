/// rosterctl's own words on the contact search screen, in the session's locale; the placeholder comes from
/// the daemon's form snapshot.
struct ContactsText: Equatable {
    let label: String
    let columns: [String]
    let noMatches: String
    let searching: String
    let help: String
    let cancelled: String

    static func forLocale(_ locale: String) -> ContactsText {
        switch locale {
        case "zh-Hans":
            return ContactsText(label: "搜索", columns: ["姓名", "电话", "邮箱"], noMatches: "没有匹配的联系人", searching: "搜索中…",
                                help: "↑↓ 选择 · Enter 输出 · Esc 取消", cancelled: "已取消")
        case "vi":
            return ContactsText(label: "Tìm", columns: ["TÊN", "ĐIỆN THOẠI", "EMAIL"], noMatches: "Không có liên hệ nào khớp",
                                searching: "Đang tìm…", help: "↑↓ chọn · Enter in ra · Esc hủy", cancelled: "Đã hủy")
        case "ko":
            return ContactsText(label: "검색", columns: ["이름", "전화", "이메일"], noMatches: "일치하는 연락처가 없습니다",
                                searching: "검색 중…", help: "↑↓ 선택 · Enter 출력 · Esc 취소", cancelled: "취소했습니다")
        default:
            return ContactsText(label: "Search", columns: ["NAME", "PHONE", "EMAIL"], noMatches: "No contacts match",
                                searching: "Searching…", help: "↑↓ select · Enter print · Esc cancel", cancelled: "Cancelled")
        }
    }
}
