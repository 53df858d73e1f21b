"""The pages, rendered in the page's language from pages/*.html: `{{word}}` is a word of words.py."""
from __future__ import annotations

import html
import json
import re
from functools import cache
from pathlib import Path

from .words import WORDS

PAGES_DIRECTORY = Path(__file__).with_name("pages")
PAGES = ("register", "login", "account", "contacts", "verify", "forgot", "recover")
# The pages the header links to; the others are reached from these (or, /recover, from the mailed link).
NAV_PAGES = ("register", "login", "account", "contacts")
# Pages that make no sense without a log-in; without a cookie they send the browser to the log-in page at once.
LOGGED_IN_PAGES = frozenset({"account", "contacts", "verify"})
PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")


@cache
def _template(name: str) -> str:
    return (PAGES_DIRECTORY / f"{name}.html").read_text(encoding="utf-8")


def render(page: str, locale: str, logged_in: bool = False) -> str:
    """The page's HTML in `locale`, its words for the script in a JSON block (not executed, so the CSP allows it);
    the links of someone `logged_in` (a cookie came) are shown, the others hidden, until the page learns better."""
    words = WORDS[locale]
    values = {key: html.escape(text) for key, text in words.items()}
    values |= {"page": page, "lang": locale, "title": values[page]}
    text = _template("base").replace("{{content}}", _template(page)).replace("{{nav}}", _nav(page, logged_in))
    text = text.replace("{{logout_hidden}}", "" if logged_in else " hidden")
    text = PLACEHOLDER.sub(lambda match: values[match.group(1)] if match.group(1) != "script_words" else match.group(0),
                           text)
    return text.replace("{{script_words}}", json.dumps(words, ensure_ascii=False).replace("<", "\\u003c"))


def _nav(current: str, logged_in: bool) -> str:
    """Register and Log in for someone logged out; Account and Contacts (and Log out, in base.html) otherwise."""
    links = []
    for page in NAV_PAGES:
        marker = ' aria-current="page"' if page == current else ""
        needs = page in LOGGED_IN_PAGES
        kind = "logged-in-only" if needs else "logged-out-only"
        hidden = "" if needs == logged_in else " hidden"
        links.append(f'<li class="{kind}"{hidden}><a href="/{page}"{marker}>{{{{{page}}}}}</a></li>')
    return "\n".join(links)
