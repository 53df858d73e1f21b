"""The page's language: Accept-Language mapped as rosterctl maps LANG (Sources/RosterClient/ClientLocale.swift)."""
from __future__ import annotations

SUPPORTED = ("zh-Hans", "en", "vi", "ko")
TRADITIONAL_CHINESE = ("hant", "tw", "hk", "mo")


def map_tag(tag: str) -> str | None:
    """zh-Hans, en, vi or ko for a tag such as `zh-CN`, `en-US`, `ko_KR.UTF-8` or `ko`; None for anything else
    (Traditional Chinese included: the daemon has no messages for it)."""
    base = tag.split(".", 1)[0].split("@", 1)[0]
    parts = [part for part in base.lower().replace("_", "-").split("-") if part]
    if not parts:
        return None
    language = parts[0]
    if language == "zh":
        return None if any(part in TRADITIONAL_CHINESE for part in parts) else "zh-Hans"
    return language if language in ("en", "vi", "ko") else None


def from_accept_language(header: str | None) -> str:
    """The best-weighted language of an Accept-Language header that the daemon speaks; `en` when none is, as
    rosterctl falls back to English for a locale it cannot map."""
    weighted: list[tuple[float, int, str]] = []
    for index, item in enumerate((header or "").split(",")):
        tag, _, parameters = item.strip().partition(";")
        weight = 1.0
        for parameter in parameters.split(";"):
            name, _, value = parameter.strip().partition("=")
            if name.strip() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        if tag and weight > 0:
            weighted.append((-weight, index, tag.strip()))
    for _, _, tag in sorted(weighted):
        mapped = map_tag(tag)
        if mapped is not None:
            return mapped
    return "en"
