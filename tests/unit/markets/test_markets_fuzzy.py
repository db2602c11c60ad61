"""The typo-tolerant matching of search: edit distance, edit budgets, alternatives."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from predmarket.markets import _fuzzy


def reference_osa(a: str, b: str) -> int:
    """Textbook optimal-string-alignment distance (full table, no cut-off)."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


@given(st.text("abcde", max_size=9), st.text("abcde", max_size=9), st.integers(0, 4))
def test_distance_is_osa_capped_at_the_limit(a: str, b: str, limit: int) -> None:
    assert _fuzzy.distance(a, b, limit) == min(reference_osa(a, b), limit + 1)


def test_distance_examples() -> None:
    assert _fuzzy.distance("bitcon", "bitcoin", 2) == 1  # deletion
    assert _fuzzy.distance("electoin", "election", 2) == 1  # transposition
    assert _fuzzy.distance("wether", "weather", 2) == 1
    assert _fuzzy.distance("abc", "xyz", 2) == 3  # over the limit: limit + 1
    assert _fuzzy.distance("", "abc", 5) == 3
    assert _fuzzy.distance("same", "same", 0) == 0


def test_edit_budget() -> None:
    assert [_fuzzy.max_edits("x" * n) for n in (1, 2, 3, 4, 5, 8, 9, 40, 41)] == [
        0,
        0,
        1,
        1,
        2,
        2,
        3,
        3,
        0,
    ]
    assert _fuzzy.max_edits("2027") == 0  # numbers are not typos


def test_words_fold_case_and_split_on_punctuation() -> None:
    assert _fuzzy.words("Will BTC > $100k, in 2026? Köln-Süd_x") == [
        "will",
        "btc",
        "100k",
        "in",
        "2026",
        "köln",
        "süd",
        "x",
    ]
    assert _fuzzy.vocabulary(["A rain", "rain, Rain!"]) == Counter({"rain": 3})


def test_alternatives() -> None:
    vocab = Counter({"bitcoin": 5, "bitcoins": 1, "election": 2, "elections": 9, "rain": 1})
    assert _fuzzy.alternatives("rain", vocab) == [_fuzzy.Alternative("rain", 0, 1.0)]
    # fewest edits first, then the most frequent word
    assert [a.word for a in _fuzzy.alternatives("bitcon", vocab)] == ["bitcoin", "bitcoins"]
    assert [a.word for a in _fuzzy.alternatives("electon", vocab)] == ["election", "elections"]
    assert _fuzzy.alternatives("bitcon", vocab)[0].similarity == round(1 - 1 / 7, 4)
    assert _fuzzy.alternatives("zzzzqqq", vocab) == []
    assert _fuzzy.alternatives("ra", vocab) == []  # too short to correct
    many = Counter({f"wor{c}": 1 for c in "abcdefgh"})
    assert len(_fuzzy.alternatives("worx", many)) == _fuzzy.MAX_ALTERNATIVES


@given(
    st.text("abcdef", min_size=3, max_size=10),
    st.lists(st.text("abcdef1", min_size=1, max_size=11), max_size=30),
)
def test_the_shortcuts_drop_no_close_word(term: str, words: list[str]) -> None:
    vocab = Counter(words)
    budget = _fuzzy.max_edits(term)
    if term in vocab or budget == 0:
        return
    close = sorted(
        (reference_osa(term, w), -f, w)
        for w, f in vocab.items()
        if not w.isdigit() and reference_osa(term, w) <= budget
    )
    expected = [w for _, _, w in close[: _fuzzy.MAX_ALTERNATIVES]]
    assert [a.word for a in _fuzzy.alternatives(term, vocab)] == expected
