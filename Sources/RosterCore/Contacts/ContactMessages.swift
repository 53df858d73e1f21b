/// Texts for the contacts form's query field and for contact fields refused by `contacts.add`/`update`.
/// (`email.invalid_email` is shared with the register form and lives with its texts.)
enum ContactMessages {
    static let table: [String: [RosterLocale: String]] = [
        "query.empty": [
            .zhHans: "输入姓名、拼音、首字母或电话搜索", .en: "Search by name, initials, pinyin or phone",
            .vi: "Tìm theo tên, chữ cái đầu hoặc số điện thoại", .ko: "이름, 초성 또는 전화번호로 검색하세요",
        ],
        "query.entered": [
            .zhHans: "正在搜索", .en: "Searching", .vi: "Đang tìm", .ko: "검색 중",
        ],
        "name.name_required": [
            .zhHans: "请输入联系人姓名", .en: "A contact needs a name",
            .vi: "Liên hệ cần có tên", .ko: "연락처에는 이름이 필요합니다",
        ],
        "name.name_too_long": [
            .zhHans: "姓名不能超过200个字符", .en: "The name is longer than 200 characters",
            .vi: "Tên dài hơn 200 ký tự", .ko: "이름이 200자를 넘습니다",
        ],
        "phone.invalid_phone": [
            .zhHans: "电话号码只能包含数字、空格和 + - ( )", .en: "A phone number may hold only digits, spaces and + - ( )",
            .vi: "Số điện thoại chỉ được chứa chữ số, dấu cách và + - ( )",
            .ko: "전화번호에는 숫자, 공백, + - ( )만 쓸 수 있습니다",
        ],
        "note.note_too_long": [
            .zhHans: "备注不能超过4000个字符", .en: "The note is longer than 4,000 characters",
            .vi: "Ghi chú dài hơn 4.000 ký tự", .ko: "메모가 4,000자를 넘습니다",
        ],
    ]
}
