"""Typo-tolerant matching for search: reading each query term as words the data actually uses.

Pure functions, no I/O. The search service runs them only when the strict (substring) match found
nothing: every term that is not a word of the vocabulary (the words of all questions, categories,
tags and event titles) is replaced by the vocabulary words within a small edit distance of it,
and the strict match runs again with those alternatives. The algorithm is described in
``docs/markets.md``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

# Words are runs of letters and digits in any script; case is folded.
_WORD: Final = re.compile(r"[^\W_]+")
#: Alternatives kept per misspelt term (the closest, then the most frequent words).
MAX_ALTERNATIVES: Final = 5
#: Longest term considered for correction; longer ones are not words people mistype.
MAX_TERM_LENGTH: Final = 40


def words(text: str) -> list[str]:
    """The case-folded words of ``text``."""
    return _WORD.findall(text.casefold())


def vocabulary(texts: Iterable[str]) -> Counter[str]:
    """Word frequencies over ``texts`` (words of two or more characters)."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(w for w in words(text) if len(w) >= 2)
    return counts


def max_edits(term: str) -> int:
    """Edits tolerated in a term: none below 3 characters (too many words are one edit apart),
    1 up to 4, 2 up to 8, then 3. Numbers are never corrected: 2025 is not a typo of 2026."""
    n = len(term)
    if n < 3 or term.isdigit() or n > MAX_TERM_LENGTH:
        return 0
    if n <= 4:
        return 1
    if n <= 8:
        return 2
    return 3


def distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance of ``a`` and ``b`` (insertions, deletions,
    substitutions and transpositions of adjacent characters, each one edit), or ``limit + 1``
    as soon as it is certain to exceed ``limit``."""
    if a == b:
        return 0
    la, lb = len(a), len(b)
    if abs(la - lb) > limit:
        return limit + 1
    if la == 0 or lb == 0:
        return max(la, lb)
    before: list[int] = []  # row i - 2, for transpositions
    previous = list(range(lb + 1))
    for i in range(1, la + 1):
        current = [i] + [0] * lb
        ca = a[i - 1]
        row_min = i
        for j in range(1, lb + 1):
            cb = b[j - 1]
            cost = 0 if ca == cb else 1
            value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                value = min(value, before[j - 2] + 1)
            current[j] = value
            row_min = min(row_min, value)
        if row_min > limit:
            return limit + 1
        before, previous = previous, current
    return previous[lb] if previous[lb] <= limit else limit + 1


@dataclass(frozen=True)
class Alternative:
    """A vocabulary word a term may stand for."""

    word: str
    edits: int
    similarity: float
    """``1 - edits / max(len(term), len(word))``, in 0..1."""


def alternatives(
    term: str, vocab: Mapping[str, int], *, limit: int = MAX_ALTERNATIVES
) -> list[Alternative]:
    """What ``term`` may stand for: itself when it is a vocabulary word, else the closest words
    (fewest edits, then most frequent, then alphabetical); empty when nothing is close.

    Numbers in the vocabulary are never offered. Two cheap bounds skip most words before the
    distance is computed: the length difference, and the letters one word has that the other
    lacks (each missing letter costs at least one edit).
    """
    if term in vocab:
        return [Alternative(term, 0, 1.0)]
    edits = max_edits(term)
    if edits == 0:
        return []
    letters = set(term)
    found: list[tuple[int, int, str]] = []
    n = len(term)
    for word, frequency in vocab.items():
        if abs(len(word) - n) > edits or word.isdigit():
            continue
        other = set(word)
        if len(letters - other) > edits or len(other - letters) > edits:
            continue
        d = distance(term, word, edits)
        if d <= edits:
            found.append((d, -frequency, word))
    found.sort()
    return [
        Alternative(word, d, round(1 - d / max(n, len(word)), 4)) for d, _, word in found[:limit]
    ]
