"""Usernames that cannot pass for someone else's.

Django's username field already NFKC-normalises what is typed (full-width letters, ligatures)
and refuses a name equal to an existing one ignoring case. What it lets through are names
written in another script's look-alike letters: Cyrillic "а" for Latin "a" makes "аdа" a
second "ada" to every reader. The skeleton maps each such letter to the Latin one it imitates
(Unicode's confusables data, through confusable_homoglyphs), so two names that look alike
have the same skeleton.

Only non-ASCII letters are mapped: the data also maps ASCII digits and signs ("2", "?") to
look-alikes outside ASCII, which would hide an ASCII name's skeleton from the lookup. And the
data's prototype for a capital I (Greek "Ι", Cyrillic "І") is a small "l", so in a skeleton
"i" and "l" are one letter: "Іvan" passes for "Ivan".
"""

from __future__ import annotations

import re

from confusable_homoglyphs import confusables
from django.contrib.auth import get_user_model


def username_skeleton(name: str) -> str:
    """`name` case-folded, with every non-ASCII letter that imitates a Latin one replaced by
    it, and "i" written as "l"."""
    found = confusables.is_confusable(name, greedy=True, preferred_aliases=["latin"]) or []
    latin = {
        item["character"]: item["homoglyphs"][0]["c"]
        for item in found
        if not item["character"].isascii()
        and item["homoglyphs"]
        and len(item["homoglyphs"][0]["c"]) == 1
    }
    return "".join(latin.get(ch, ch) for ch in name).casefold().replace("i", "l")


def username_look_alike(name: str) -> str | None:
    """An existing username that `name` would pass for, or None.

    ASCII names are found by a case-insensitive match on the skeleton, "l" standing for "i"
    or "l" (an ASCII name against ASCII names is Django's own uniqueness check); only the
    (few) existing names with non-ASCII letters are compared one by one.
    """
    users = get_user_model().objects
    skeleton = username_skeleton(name)
    if skeleton.isascii() and not name.isascii():
        pattern = "".join("[il]" if ch == "l" else re.escape(ch) for ch in skeleton)
        match = (
            users.filter(username__iregex=f"^{pattern}$").values_list("username", flat=True).first()
        )
        if match is not None:
            return match
    for existing in users.filter(username__regex=r"[^\x00-\x7f]").values_list(
        "username", flat=True
    ):
        if username_skeleton(existing) == skeleton:
            return existing
    return None
