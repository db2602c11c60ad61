"""Every rejection raises its typed error with a stable code and changes nothing."""

from collections.abc import Callable

import pytest

from predmarket.exchange import (
    QUANTITY_STEP,
    SHARE,
    AlreadyResolved,
    ClaimExceedsSupply,
    ExchangeError,
    InsufficientShares,
    InvalidFill,
    InvalidPrice,
    InvalidQuantity,
    InvalidRequest,
    Market,
    MarketClosed,
    NotOrderOwner,
    NotResolved,
    Outcome,
    Resolution,
    Side,
    UnknownOrder,
)

BUY, SELL = Side.BUY, Side.SELL
YES, NO = Outcome.YES, Outcome.NO


def state(market: Market) -> tuple[object, ...]:
    """Everything observable about a market, to check that a rejection changed nothing."""
    return (
        market.next_order_id,
        market.status,
        market.orders(),
        market.collateral_escrow,
        market.collateral_deposited,
        market.collateral_withdrawn,
        market.fees_collected,
        market.yes_supply,
        market.no_supply,
        market.shares_escrow(YES),
        market.shares_escrow(NO),
        market.depth(YES),
        market.depth(NO),
    )


@pytest.fixture
def market() -> Market:
    m = Market()
    m.place("y", BUY, YES, 500, 5 * SHARE)
    m.place("n", BUY, NO, 500, 5 * SHARE)
    m.place("a", BUY, YES, 400, SHARE)
    m.place("y", SELL, YES, 600, SHARE)
    return m


def expect(
    market: Market, call: Callable[[], object], error: type[ExchangeError], code: str
) -> ExchangeError:
    before = state(market)
    with pytest.raises(error) as info:
        call()
    assert info.value.code == code
    assert str(info.value) == info.value.message and info.value.message
    assert state(market) == before
    return info.value


@pytest.mark.parametrize("price", [0, 1000, -1, 1001, True, 500.0, "500", None])
def test_bad_price(market: Market, price: object) -> None:
    err = expect(
        market,
        lambda: market.place("a", BUY, YES, price, SHARE),  # type: ignore[arg-type]
        InvalidPrice,
        "INVALID_PRICE",
    )
    assert err.chain_code == 13 and err.field == "price"
    assert "price" in err.message and repr(price) in err.message


@pytest.mark.parametrize(
    "quantity", [0, -QUANTITY_STEP, QUANTITY_STEP + 1, 123, float(SHARE), "1", False]
)
@pytest.mark.parametrize("side", [BUY, SELL])
def test_bad_quantity(market: Market, quantity: object, side: Side) -> None:
    err = expect(
        market,
        lambda: market.place("y", side, YES, 500, quantity),  # type: ignore[arg-type]
        InvalidQuantity,
        "INVALID_FILL",
    )
    assert isinstance(err, InvalidFill)
    assert err.chain_code == 12 and err.field == "quantity"
    assert "quantity" in err.message


@pytest.mark.parametrize(
    ("field", "args"),
    [
        ("side", ("a", "hold", YES, 500, SHARE)),
        ("side", ("a", None, YES, 500, SHARE)),
        ("outcome", ("a", BUY, "maybe", 500, SHARE)),
        ("outcome", ("a", BUY, ["yes"], 500, SHARE)),
        ("owner", ("", BUY, YES, 500, SHARE)),
        ("owner", (None, BUY, YES, 500, SHARE)),
    ],
)
def test_bad_arguments(market: Market, field: str, args: tuple[object, ...]) -> None:
    err = expect(market, lambda: market.place(*args), InvalidRequest, "INVALID_REQUEST")  # type: ignore[arg-type]
    assert err.field == field and field in err.message and err.chain_code is None


def test_plain_strings_are_accepted_for_enums(market: Market) -> None:
    result = market.place("a", "buy", "no", 300, SHARE)  # type: ignore[arg-type]
    assert result.side is BUY and result.outcome is NO
    assert market.best_bid(NO) == 300
    assert market.best_bid("no") == 300  # type: ignore[arg-type]


def test_unknown_order(market: Market) -> None:
    err = expect(market, lambda: market.cancel("a", 999), UnknownOrder, "NOT_FOUND")
    assert err.field == "order_id" and "999" in err.message
    with pytest.raises(UnknownOrder):
        market.get_order_or_raise(999)
    assert market.get_order(999) is None


def test_cancel_twice_and_cancel_filled(market: Market) -> None:
    bid = market.place("a", BUY, YES, 450, SHARE).order_id
    market.cancel("a", bid)
    expect(market, lambda: market.cancel("a", bid), UnknownOrder, "NOT_FOUND")
    ask = market.place("y", SELL, YES, 550, SHARE).order_id
    market.place("b", BUY, YES, 550, SHARE)
    expect(market, lambda: market.cancel("y", ask), UnknownOrder, "NOT_FOUND")


def test_cancel_of_another_owners_order(market: Market) -> None:
    bid = market.place("a", BUY, YES, 450, SHARE).order_id
    err = expect(market, lambda: market.cancel("mallory", bid), NotOrderOwner, "NOT_ORDER_OWNER")
    assert err.field == "owner" and "mallory" in err.message
    assert market.get_order_or_raise(bid).remaining == SHARE


def test_sell_of_shares_that_do_not_exist(market: Market) -> None:
    # 5 yes shares exist, 1 already rests in a sell.
    err = expect(
        market,
        lambda: market.place("y", SELL, YES, 700, 5 * SHARE),
        InsufficientShares,
        "INSUFFICIENT_BALANCE",
    )
    assert err.field == "quantity"
    market.place("y", SELL, YES, 700, 4 * SHARE)


def test_orders_after_resolve(market: Market) -> None:
    market.resolve(Resolution.YES)
    err = expect(
        market, lambda: market.place("a", BUY, YES, 500, SHARE), MarketClosed, "MARKET_CLOSED"
    )
    assert err.chain_code is None


def test_orders_after_close_but_cancels_still_work(market: Market) -> None:
    bid = market.place("a", BUY, YES, 450, SHARE).order_id
    market.close()
    expect(market, lambda: market.place("a", BUY, YES, 500, SHARE), MarketClosed, "MARKET_CLOSED")
    assert market.cancel("a", bid).quantity == SHARE
    market.close()  # idempotent
    market.resolve(Resolution.NO)
    with pytest.raises(AlreadyResolved):
        market.close()


def test_resolve_twice(market: Market) -> None:
    market.resolve(Resolution.NO)
    err = expect(
        market, lambda: market.resolve(Resolution.YES), AlreadyResolved, "ALREADY_RESOLVED"
    )
    assert "no" in err.message


def test_bad_resolution(market: Market) -> None:
    err = expect(
        market,
        lambda: market.resolve("maybe"),  # type: ignore[arg-type]
        InvalidRequest,
        "INVALID_REQUEST",
    )
    assert err.field == "resolution"


def test_claim_before_resolve(market: Market) -> None:
    expect(market, lambda: market.claim("y", SHARE, 0), NotResolved, "MARKET_NOT_RESOLVED")


@pytest.mark.parametrize(
    ("yes", "no", "field"),
    [
        (0, 0, "yes_quantity"),
        (-QUANTITY_STEP, 0, "yes_quantity"),
        (1, 0, "yes_quantity"),
        (0, QUANTITY_STEP + 5, "no_quantity"),
        (0, 1.0, "no_quantity"),
    ],
)
def test_bad_claim_quantity(market: Market, yes: object, no: object, field: str) -> None:
    market.resolve(Resolution.INVALID)
    err = expect(
        market,
        lambda: market.claim("y", yes, no),  # type: ignore[arg-type]
        InvalidQuantity,
        "INVALID_FILL",
    )
    assert err.field == field and field in err.message and err.chain_code == 12


@pytest.mark.parametrize(("yes", "no", "field"), [(6, 0, "yes_quantity"), (0, 6, "no_quantity")])
def test_claim_of_more_than_outstanding(market: Market, yes: int, no: int, field: str) -> None:
    market.resolve(Resolution.YES)
    err = expect(
        market,
        lambda: market.claim("y", yes * SHARE, no * SHARE),
        ClaimExceedsSupply,
        "INVALID_FILL",
    )
    assert isinstance(err, InvalidFill) and err.chain_code == 12 and err.field == field


def test_hierarchy() -> None:
    for cls in (
        InvalidPrice,
        InvalidFill,
        InvalidQuantity,
        ClaimExceedsSupply,
        InsufficientShares,
        UnknownOrder,
        NotOrderOwner,
        MarketClosed,
        AlreadyResolved,
        NotResolved,
        InvalidRequest,
    ):
        assert issubclass(cls, ExchangeError)
        assert cls.code.isupper() and cls.code.replace("_", "").isalpha()
    assert ExchangeError("x").field is None


def test_claim_needs_an_owner(market: Market) -> None:
    market.resolve(Resolution.YES)
    err = expect(
        market,
        lambda: market.claim("", SHARE, 0),
        InvalidRequest,
        "INVALID_REQUEST",
    )
    assert err.field == "owner"
