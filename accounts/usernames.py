"""Usernames that cannot pass for someone else's.

Django's username field already NFKC-normalises what is typed (full-width letters, ligatures)
and refuses a name equal to an existing one ignoring case. What it lets through are names
written in another script's look-alike letters: Cyrillic "а" for Latin "a" makes "аdа" a
second "ada" to every reader. The skeleton maps each such letter to the Latin one it imitates
(Unicode's confusables data, through confusable_homoglyphs), so two names that look alike
have the same skeleton.
"""

from __future__ import annotations

from confusable_homoglyphs import confusables
from django.contrib.auth import get_user_model


def username_skeleton(name: str) -> str:
    """`name` case-folded, with every letter that imitates a Latin one replaced by it."""
    found = confusables.is_confusable(name, greedy=True, preferred_aliases=["latin"]) or []
    latin = {
        item["character"]: item["homoglyphs"][0]["c"]
        for item in found
        if item["homoglyphs"] and len(item["homoglyphs"][0]["c"]) == 1
    }
    return "".join(latin.get(ch, ch) for ch in name).casefold()


def username_look_alike(name: str) -> str | None:
    """An existing username that `name` would pass for, or None.

    ASCII names are found by an index-friendly case-insensitive match on the skeleton; only
    the (few) existing names with non-ASCII letters are compared one by one.
    """
    users = get_user_model().objects
    skeleton = username_skeleton(name)
    if skeleton.isascii():
        match = users.filter(username__iexact=skeleton).values_list("username", flat=True).first()
        if match is not None:
            return match
    for existing in users.filter(username__regex=r"[^\x00-\x7f]").values_list(
        "username", flat=True
    ):
        if username_skeleton(existing) == skeleton:
            return existing
    return None
